// `--fps` under the real CLI: a stall shows up as a second of low frame rate and a run of dropped frames; a
// quiet workload holds 60 frames a second.
import Foundation
import StallwatchTestSupport
import Testing

// Serialized: frame rates are timed, and the machine has two cores.
@Suite(.serialized) struct FrameRateTests {
    @Test func stallLowersTheFrameRateAndDropsFrames() throws {
        let result = try runStallwatch(["demo", "--fps", "--format", "json", "--", "--stalls", "1"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let records = try result.records
        let readings = records.compactMap(\.fps)
        #expect(readings.count >= 2, "a reading a second: \(result.stdout)")
        // The 600 ms stall falls in one second (or straddles two): that second has far fewer than 60 frames.
        let slow = readings.filter { $0.fps < 45 && $0.droppedMs > 0 }
        #expect(!slow.isEmpty, "a slow second: \(readings)")
        for reading in readings {
            #expect(reading.schemaVersion == 3)
            // pid and frames are Int in FrameRateRecord: a missing or non-integer one fails decoding above.
            #expect(reading.pid > 0 && reading.frames >= 0)
            #expect(reading.startedAt.hasSuffix("Z"))
        }
        let drops = records.compactMap(\.frameDrops)
        #expect(drops.count == 1, "one run of dropped frames: \(result.stdout)")
        let total = try #require(drops.first?.totalMs)
        #expect(total >= 550 && total <= 900, "the stall's slow frames: \(total) ms")
        #expect((drops.first?.droppedMs ?? 0) > total, "long frames weigh more than linearly")
        let series = try #require(try result.summary?.fps.value)
        #expect(series.count == readings.count)
    }

    @Test func quietWorkloadHoldsSixtyFrames() throws {
        let result = try runStallwatch(["demo", "--scenario", "baseline", "--fps", "--format", "json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let records = try result.records
        let readings = records.compactMap(\.fps)
        #expect(readings.count >= 2, "a reading a second: \(result.stdout)")
        // The last reading may cover a few frames only; every full second is near 60.
        for reading in readings where reading.seconds >= 0.5 {
            let fps = reading.fps
            #expect(fps >= 40 && fps <= 65, "near 60: \(reading)")
        }
        #expect(!records.contains { $0.event == "frame-drops" }, "\(result.stdout)")
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
        #expect(try !result.records.contains { ["fps", "frame-drops"].contains($0.event) })
        #expect(try (result.summary?.fps ?? .absent) == .absent, "no fps key without --fps")
    }
}
