// `--fps` in both formats: JSON records per second and per run of dropped frames, text lines and series.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

@Suite struct FrameRateReporterTests {
    let reading = FrameRateReport(
        pid: 42, processName: "MyApp",
        event: .reading(
            FrameRateMonitor.Reading(start: 1_000_000_000, end: 2_017_000_000, frames: 26, dropped: 2_084_990_000)))
    let drops = FrameRateReport(
        pid: 42, processName: "MyApp",
        event: .drops(
            FrameRateMonitor.DropRecord(
                begin: 1_200_000_000, end: 1_801_256_000, total: 601_256_000, dropped: 2_084_990_000)))

    func decode<Record: Decodable>(_ type: Record.Type, _ line: String) throws -> Record {
        #expect(line.hasSuffix("\n"))
        return try JSONLines.decode(type, from: line)
    }

    @Test func fpsRecordFollowsTheSchema() throws {
        let reporter = JSONLinesReporter(clock: fixedClock)
        let line = reporter.render(reading)
        #expect(line.hasPrefix(#"{"event":"fps","schemaVersion":3,"pid":42,"startedAt":"#))
        let record = try decode(FrameRateRecord.self, line)
        #expect(record.seconds == 1.017)
        #expect(record.fps == 25.6)
        #expect(record.frames == 26)
        #expect(record.droppedMs == 2084.99)
        #expect(record.startedAt.hasSuffix("Z"))
    }

    @Test func frameDropsRecordFollowsTheSchema() throws {
        let reporter = JSONLinesReporter(clock: fixedClock)
        let record = try decode(FrameDropsRecord.self, reporter.render(drops))
        #expect(record.event == "frame-drops")
        #expect(record.totalMs == 601.256)
        #expect(record.droppedMs == 2084.99)
        #expect(record.endedAt != record.startedAt)
    }

    @Test func textShowsDropsAsOneLineAndReadingsNotAtAll() {
        let reporter = TextReporter(clock: fixedClock, colored: false)
        #expect(reporter.render(reading) == "")
        #expect(
            reporter.render(drops)
                == "stallwatch: frames dropped in MyApp (pid 42): 601 ms of slow frames, 2085 ms weighted\n")
    }

    func summary(fps: [Double]?) -> RunSummary {
        var summary = RunSummary(
            stalls: [], runNanoseconds: 3_000_000_000, watchedPids: [42], exitStatus: 0, warnings: [])
        summary.framesPerSecond = fps
        return summary
    }

    @Test func textSummaryHasTheSeriesOnlyWithFPS() {
        var reporter = TextReporter(clock: fixedClock, colored: false)
        #expect(reporter.render(summary(fps: [60, 59.6, 25.6])).contains("\n  frame rate (--fps): 60 60 26\n"))
        #expect(!reporter.render(summary(fps: nil)).contains("frame rate"))
        #expect(reporter.render(summary(fps: [])).contains("frame rate (--fps): no readings"))
    }

    @Test func longSeriesIsCut() {
        let reporter = TextReporter(clock: fixedClock, colored: false)
        let rates = Array(repeating: 60.0, count: 130) + [12]
        let line = reporter.frameRateSeries(summary(fps: rates))
        #expect(line?.hasSuffix(" … (11 more; lowest 12)") == true)
    }

    @Test func jsonSummaryHasFPSOnlyWithFPS() throws {
        let reporter = JSONLinesReporter(clock: fixedClock)
        let with = try decode(SummaryRecord.self, reporter.render(summary(fps: [60, 25.64])))
        #expect(with.fps == .value([60, 25.6]))
        let without = try decode(SummaryRecord.self, reporter.render(summary(fps: nil)))
        #expect(without.fps == .absent)
    }
}
