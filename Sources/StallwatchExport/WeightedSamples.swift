// The samples of every stall with the stalled time each stands for: what flame graphs and profiles add up.
import StallwatchAggregate

/// One sample and its weight; a stall with no stack captured counts as one sample of no stack.
struct WeightedSample {
    var stall: Int
    /// Index into the collection's stacks, or `nil` for a stall without any stack.
    var stack: Int32?
    var weightMs: Double
    var capturedAfterMs: Double
}

extension StallCollection {
    /// Calls `body` with each sample of each stall (of `stalls`, or all), weighted by ``Stall/sampleWeightsMs``.
    func forEachWeightedSample(of stalls: [Int]? = nil, _ body: (WeightedSample) -> Void) {
        for index in stalls ?? Array(self.stalls.indices) {
            let stall = self.stalls[index]
            if stall.samples.isEmpty {
                body(WeightedSample(stall: index, stack: nil, weightMs: stall.knownDurationMs, capturedAfterMs: 0))
                continue
            }
            for (sample, weight) in zip(stall.samples, stall.sampleWeightsMs) {
                body(
                    WeightedSample(
                        stall: index, stack: sample.stack, weightMs: weight, capturedAfterMs: sample.capturedAfterMs))
            }
        }
    }

    /// A stack's frame indices outermost first, as flame graphs draw them.
    func rootFirst(_ stack: Int32?) -> [Int32] {
        guard let stack else { return [] }
        return stacks[Int(stack)].reversed()
    }
}

/// The name flame graphs show for a stall without any stack.
let noStackName = "[no stack captured]"
/// … and for one whose stack `--rate-limit` left out: it took one sample, which named its culprit.
let stackNotKeptName = "[stack not kept: over --rate-limit]"

extension StallCollection.Stall {
    /// The name a flame graph gives this stall's time when it has no stack.
    var missingStackName: String { suppressed ? stackNotKeptName : noStackName }
}
