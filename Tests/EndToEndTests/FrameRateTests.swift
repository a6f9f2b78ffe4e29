// `--fps` under the real CLI: a stall shows up as a second of low frame rate and a run of dropped frames; a
// quiet workload holds 60 frames a second.
import Foundation
import Testing

// Serialized: frame rates are timed, and the machine has two cores.
@Suite(.serialized) struct FrameRateTests {
    @Test func stallLowersTheFrameRateAndDropsFrames() throws {
        let result = try runStallwatch(["demo", "--fps", "--format", "json", "--", "--stalls", "1"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let readings = result.records.filter { $0["event"] as? String == "fps" }
        #expect(readings.count >= 2, "a reading a second: \(result.stdout)")
        // The 600 ms stall falls in one second (or straddles two): that second has far fewer than 60 frames.
        let slow = readings.filter { ($0["fps"] as? Double ?? 60) < 45 && ($0["droppedMs"] as? Double ?? 0) > 0 }
        #expect(!slow.isEmpty, "a slow second: \(readings)")
        for reading in readings {
            #expect(reading["schemaVersion"] as? Int == 2)
            #expect(reading["pid"] as? Int != nil && reading["frames"] as? Int != nil)
            #expect((reading["startedAt"] as? String)?.hasSuffix("Z") == true)
        }
        let drops = result.records.filter { $0["event"] as? String == "frame-drops" }
        #expect(drops.count == 1, "one run of dropped frames: \(result.stdout)")
        let total = try #require(drops.first?["totalMs"] as? Double)
        #expect(total >= 550 && total <= 900, "the stall's slow frames: \(total) ms")
        #expect((drops.first?["droppedMs"] as? Double ?? 0) > total, "long frames weigh more than linearly")
        let series = try #require(result.summary?["fps"] as? [Double])
        #expect(series.count == readings.count)
    }

    @Test func quietWorkloadHoldsSixtyFrames() throws {
        let result = try runStallwatch(["demo", "--scenario", "baseline", "--fps", "--format", "json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let readings = result.records.filter { $0["event"] as? String == "fps" }
        #expect(readings.count >= 2, "a reading a second: \(result.stdout)")
        // The last reading may cover a few frames only; every full second is near 60.
        for reading in readings where (reading["seconds"] as? Double ?? 0) >= 0.5 {
            let fps = reading["fps"] as? Double ?? 0
            #expect(fps >= 40 && fps <= 65, "near 60: \(reading)")
        }
        #expect(!result.records.contains { $0["event"] as? String == "frame-drops" }, "\(result.stdout)")
    }

    @Test func textSummaryShowsTheSeriesAndTheDrops() throws {
        let result = try runStallwatch(["demo", "--fps", "--color", "never", "--", "--stalls", "1"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("stallwatch: frames dropped in stallwatch-demo (pid "), "\(result.stdout)")
        let series = result.stdout.split(separator: "\n").first { $0.hasPrefix("  frame rate (--fps): ") }
        #expect(series != nil, "\(result.stdout)")
    }

    @Test func withoutTheFlagThereAreNoFrameRecords() throws {
        let result = try runStallwatch(["demo", "--scenario", "baseline", "--format", "json"])
        #expect(!result.records.contains { ["fps", "frame-drops"].contains($0["event"] as? String) })
        #expect(result.summary?["fps"] == nil)
    }
}
