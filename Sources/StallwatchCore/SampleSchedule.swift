// When to sample a stall that outlasts --max-samples: keep sampling, less often, and thin what is kept.

/// Decides which of a stall's sampling moments take a stack, so that at most `maxSamples` are kept and the kept
/// ones always span the stall from its detection to (within one interval of) its end.
///
/// The watcher offers a moment once per threshold: moment 0 at detection, then 1, 2, …. At first every moment
/// is sampled. When a sample would make one more than `maxSamples`, the interval doubles and every other kept
/// sample is dropped (``thin(_:maxSamples:)``, on the side that keeps them): the kept samples are always the
/// moments that are multiples of the interval, evenly spread from detection to the latest. The side that asks
/// (the agent) and the side that keeps (the collector) apply the same rule, so they agree without talking.
public struct SampleSchedule: Sendable, Equatable {
    public let maxSamples: Int
    /// Moments between two samples.
    public private(set) var interval = 1
    /// Samples kept so far.
    public private(set) var kept = 0

    public init(maxSamples: Int) {
        self.maxSamples = max(1, maxSamples)
    }

    /// Whether to take a sample at `moment` (0 at detection, one per threshold after).
    public mutating func shouldSample(atMoment moment: Int) -> Bool {
        // One sample at most: the detection one, and nothing to thin.
        if maxSamples == 1 { return moment == 0 }
        guard moment % interval == 0 else { return false }
        kept += 1
        if kept > maxSamples {
            interval *= 2
            kept = (kept + 1) / 2
        }
        return true
    }

    /// The samples to keep once one more than `maxSamples` were taken: every other one, from the first.
    public static func thin<Sample>(_ samples: [Sample], maxSamples: Int) -> [Sample] {
        guard samples.count > max(1, maxSamples) else { return samples }
        return Swift.stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
    }
}
