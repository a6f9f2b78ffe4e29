// The reader of `stallwatch report` knows every key the JSON-lines reporter writes: a key added to the records and
// not to the reader makes every merged report warn about it.
import Foundation
import StallwatchCore
import StallwatchReport
import Testing

@testable import StallwatchAggregate

@Suite struct RecordKeysTests {
    /// The top-level keys of one JSON record.
    func keys(_ line: String) throws -> Set<String> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return Set(object.keys)
    }

    /// A stall with every optional part present: an attached, external-mode stall with a mode, a sample, a note.
    func fullStall() -> StallReport {
        var stall = StallReport(
            identifier: 1, pid: 7, tid: 7, processName: "d", phase: .afterWaiting, start: 1_000, end: 2_000_000,
            detectedAt: 1_500, thresholdNanoseconds: 80_000_000, count: 3, captureMethod: .ptrace, captureNote: "n",
            samples: [Sample(frames: [Frame(address: 1, image: "/a", symbol: "f()")], capturedAt: 1_600)])
        stall.mode = "kCFRunLoopDefaultMode"
        stall.attached = AttachedStall(mode: .agent, resolutionNanoseconds: nil)
        stall.blocker = .lock(
            LockWait(
                kind: .mutex, address: 8, operation: "FUTEX_WAIT", holder: BlockingThread(tid: 8, name: "h", state: nil)
            ))
        return stall
    }

    @Test func everyStallKeyIsKnown() throws {
        let reporter = JSONLinesReporter(clock: WallClock(offsetSeconds: 0), host: "h")
        let written = try keys(reporter.render(fullStall()))
        #expect(written.subtracting(RecordReader.stallKeys).isEmpty, "\(written.subtracting(RecordReader.stallKeys))")
    }

    @Test func everySummaryKeyIsKnown() throws {
        var summary = RunSummary(
            stalls: [fullStall()], runNanoseconds: 5_000_000_000, watchedPids: [7], exitStatus: 0, warnings: [])
        summary.framesPerSecond = [60]
        summary.strategies = [.runLoop]
        summary.attached = AttachOutcome(mode: .agent, pid: 7, processName: "d", ending: .exited)
        summary.budget = StallBudget(failOnStall: true).evaluate([fullStall()], endOfRun: 3_000_000)
        var reporter = JSONLinesReporter(clock: WallClock(offsetSeconds: 0), host: "h")
        let written = try keys(reporter.render(summary))
        #expect(
            written.subtracting(RecordReader.summaryKeys).isEmpty, "\(written.subtracting(RecordReader.summaryKeys))")
    }

    @Test func everyDeadlockKeyIsKnown() throws {
        let deadlock = DeadlockReport(
            pid: 7, processName: "d", detectedAt: 1, stallIdentifier: 1,
            threads: [.init(tid: 7, name: "d", state: nil, frames: [], lockKind: .mutex, lockAddress: 8, holder: 7)])
        let written = try keys(JSONLinesReporter(clock: WallClock(offsetSeconds: 0), host: "h").render(deadlock))
        #expect(
            written.subtracting(RecordReader.deadlockKeys).isEmpty, "\(written.subtracting(RecordReader.deadlockKeys))")
    }
}
