// A Prometheus histogram: counts under fixed upper bounds, with an exact count and sum.
import StallwatchCore

/// Durations counted under fixed bounds (`le`), as a Prometheus histogram exposes them.
///
/// Bounds are kept in nanoseconds, so that "at most this long" compares whole numbers and the `le` labels print
/// exactly (`0.0025`, never `0.0024999`).
public struct BucketHistogram: Equatable, Sendable {
    /// The upper bounds, ascending, in nanoseconds; `+Inf` is implied after the last.
    public let bounds: [UInt64]
    /// How many observations fell in each bound's bucket (not cumulative); one more at the end for `+Inf`.
    public private(set) var counts: [UInt64]
    public private(set) var sumNanoseconds: UInt64 = 0
    public private(set) var count: UInt64 = 0

    public init(bounds: [UInt64]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    public mutating func observe(nanoseconds: UInt64) {
        let index = bounds.firstIndex { nanoseconds <= $0 } ?? bounds.count
        counts[index] += 1
        count += 1
        sumNanoseconds &+= nanoseconds
    }

    /// Each bound's cumulative count (observations at most that long), then the `+Inf` one (all of them).
    public var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return counts.map { count in
            running += count
            return running
        }
    }

    /// Seconds to nanoseconds, for bounds written as the seconds Prometheus shows.
    public static func bounds(seconds: [Double]) -> [UInt64] { seconds.map { UInt64(($0 * 1e9).rounded()) } }
}

/// The busy-period histogram the agent keeps (log-linear, 8 buckets per power of two) seen under Prometheus's bounds.
public enum BusyPeriodBuckets {
    /// 1 ms to 10 s, as the issue asks: a loop's busy periods are mostly well under a stall's length.
    public static let bounds = BucketHistogram.bounds(
        seconds: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

    /// The cumulative count under each of ``bounds``, then `+Inf`; the count; and the sum in seconds, estimated.
    ///
    /// Each of the agent's buckets counts under the first bound its middle is at most: so a period within 6.25 % of a
    /// bound (the histogram's own precision, ``LatencyHistogram/precisionPercent``) may be counted on the other side
    /// of it. The agent keeps counts, not sums: the sum is each bucket's count times its middle, as precise.
    public static func cumulative(_ histogram: LatencyHistogram) -> (
        counts: [UInt64], count: UInt64, sumSeconds: Double
    ) {
        var counts = Array(repeating: UInt64(0), count: bounds.count + 1)
        var sum = 0.0
        for (index, count) in histogram.counts.enumerated() where count > 0 {
            let middle = LatencyHistogram.representative(ofBucket: index)
            let slot = bounds.firstIndex { middle <= $0 } ?? bounds.count
            counts[slot] += count
            sum += Double(count) * Double(middle) / 1e9
        }
        var running: UInt64 = 0
        let cumulative = counts.map { count in
            running += count
            return running
        }
        return (cumulative, running, sum)
    }
}
