// The keys added for the run-loop model: the mode a stall began in, and how each process was watched.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

@Suite struct RunLoopKeysTests {
    @Test func stallRecordsNameTheModeAndTheStrategy() throws {
        var stall = sampleStall()
        stall.mode = "com.example.modal"
        var reporter = JSONLinesReporter(clock: fixedClock)
        let record = try JSONLines.decode(StallRecord.self, from: reporter.render(stall))
        #expect(record.runLoopMode == .value("com.example.modal"))
        #expect(record.strategy == .value("runloop"))
        let detected = try JSONLines.decode(DetectedRecord.self, from: reporter.renderDetected(stall))
        #expect(detected.runLoopMode == .value("com.example.modal"))
        var text = TextReporter(clock: fixedClock, colored: false)
        let block = text.render(stall)
        #expect(
            block.contains("run-loop mode com.example.modal; detected after 241 ms (3 × 80 ms) by run-loop observers"))
    }

    @Test func aPingStallHasNoModeAndThePingStrategy() throws {
        var stall = sampleStall()
        stall.phase = .mainQueue
        var reporter = JSONLinesReporter(clock: fixedClock)
        let record = try JSONLines.decode(StallRecord.self, from: reporter.render(stall))
        #expect(record.runLoopMode == .null)
        #expect(record.strategy == .value("ping"))
    }

    @Test func outsideTheLoopIsItsOwnActivity() throws {
        var stall = sampleStall()
        stall.phase = .outsideLoop
        #expect(stall.isOutsideLoop)
        var reporter = JSONLinesReporter(clock: fixedClock)
        #expect(try JSONLines.decode(StallRecord.self, from: reporter.render(stall)).activity == "outsideLoop")
    }

    @Test(arguments: [([WatchStrategy](), "null"), ([.ping], "\"ping\""), ([.runLoop, .ping], "\"mixed\"")])
    func theSummarySaysHowProcessesWereWatched(strategies: [WatchStrategy], expected: String) {
        var summary = RunSummary(
            stalls: [], runNanoseconds: 1_000_000_000, watchedPids: [1], exitStatus: 0, warnings: [])
        summary.strategies = strategies
        var reporter = JSONLinesReporter(clock: fixedClock)
        #expect(reporter.render(summary).contains("\"strategy\":\(expected)"))
        var text = TextReporter(clock: fixedClock, colored: false)
        #expect(text.render(summary).contains("main-queue pings (no run loop") == strategies.contains(.ping))
    }
}
