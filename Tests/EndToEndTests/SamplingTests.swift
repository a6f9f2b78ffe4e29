// A stall longer than --max-samples thresholds is still sampled to its end: fewer samples, spread over all of it.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct SamplingTests {
    @Test func samplesSpanAStallLongerThanTheLimit() throws {
        let result = try runStallwatch([
            "demo", "--scenario", "cpu", "--max-samples", "4", "--format", "json", "--", "--stalls", "1",
            "--duration", "2s", "--period", "3s",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)")
        let duration = try #require(stall.durationMs.value)
        let moments = stall.samples.map(\.capturedAfterMs)
        #expect(moments.count <= 4, "at most --max-samples kept: \(moments)")
        #expect(moments.count >= 3, "\(moments)")
        #expect(moments.first.map { $0 < 400 } == true, "the detection sample is kept: \(moments)")
        // Stopping at the limit sampled only up to 480 ms; thinned, the last kept sample is at most one doubled
        // interval (8 thresholds, 640 ms) from the end.
        #expect(moments.last.map { $0 >= duration - 700 } == true, "\(moments) for a \(duration) ms stall")
        #expect(stall.culprit?.symbol?.contains("ChecksumEngine.crunchChecksums") == true)
    }
}
