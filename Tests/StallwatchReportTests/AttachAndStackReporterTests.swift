// attach's reports (run's records plus how the process was watched) and stack's dump, in text and JSON.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

private func decode<Record: Decodable>(_ type: Record.Type, _ line: String) throws -> Record {
    #expect(line.hasSuffix("\n") && !line.dropLast().contains("\n"), "one record per line")
    return try JSONLines.decode(type, from: line)
}

/// attach's records: the reporters of `run`, given stalls and summaries that say how the process was watched.
private struct AttachedRendering {
    let json: Bool
    let mode: WatchMode
    let samplingInterval: UInt64?
    var reporter: any Reporter

    init(json: Bool, mode: WatchMode, samplingInterval: UInt64?) {
        self.json = json
        self.mode = mode
        self.samplingInterval = samplingInterval
        reporter = json ? JSONLinesReporter(clock: fixedClock) : TextReporter(clock: fixedClock, colored: false)
    }

    mutating func render(_ stall: StallReport, startedBeforeAttach: Bool = false) -> String {
        var attached = stall
        attached.attached = AttachedStall(
            mode: mode, resolutionNanoseconds: samplingInterval, startedBeforeAttach: startedBeforeAttach)
        return reporter.render(attached)
    }

    mutating func render(_ summary: RunSummary, pid: Int32, processName: String, ending: AttachEnding) -> String {
        var attached = summary
        attached.attached = AttachOutcome(mode: mode, pid: pid, processName: processName, ending: ending)
        return reporter.render(attached)
    }
}

@Suite struct AttachReporterTests {
    @Test func jsonStallNamesTheModeRightAfterCount() throws {
        var reporter = AttachedRendering(json: true, mode: .external, samplingInterval: 80_000_000)
        let line = reporter.render(sampleStall(), startedBeforeAttach: true)
        #expect(line.contains("\"count\":3,\"mode\":\"external\",\"resolutionMs\":80,\"startedBeforeAttach\":true,"))
        let record = try decode(StallRecord.self, line)
        #expect(record.activity == "unknown", "no run-loop phase is seen from outside")
        #expect(record.durationMs == .value(612.3))
        #expect(record.culprit?.symbol == "DiskCache.waitForSlowDisk()")
    }

    @Test func jsonAgentModeKeepsTheActivityAndHasNoResolution() throws {
        var reporter = AttachedRendering(json: true, mode: .agent, samplingInterval: 80_000_000)
        let record = try decode(StallRecord.self, reporter.render(sampleStall()))
        #expect(record.mode == "agent")
        #expect(record.resolutionMs == .null)
        #expect(record.startedBeforeAttach == false)
        #expect(record.activity == "afterWaiting")
    }

    @Test func jsonSummarySaysHowTheSessionEnded() throws {
        var reporter = AttachedRendering(json: true, mode: .agent, samplingInterval: nil)
        let summary = RunSummary(
            stalls: [sampleStall()], runNanoseconds: 5_000_000_000, watchedPids: [4242], exitStatus: nil, warnings: [])
        let record = try decode(
            SummaryRecord.self, reporter.render(summary, pid: 4242, processName: "MyDaemon", ending: .signal(2)))
        #expect(record.event == "summary")
        #expect(record.exitStatus == .null)
        #expect(record.mode == "agent")
        #expect(record.pid == 4242)
        #expect(record.ended == "signal")
        #expect(record.signal == .value(2))
        let exited = try decode(
            SummaryRecord.self, reporter.render(summary, pid: 4242, processName: "MyDaemon", ending: .exited))
        #expect(exited.ended == "exited")
        #expect(exited.signal == .null)
    }

    @Test func textBlockNamesTheModeAndExternalTiming() {
        var reporter = AttachedRendering(json: false, mode: .external, samplingInterval: 80_000_000)
        let lines = reporter.render(sampleStall()).split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("stallwatch: stall #3 in MyDaemon (pid 4242): 612 ms"))
        #expect(lines[1].hasPrefix("  began ~"))
        #expect(lines[1].hasSuffix(", out of its event-loop wait; detected after 241 ms (3 busy samples)"))
        #expect(
            lines[2]
                == "  mode: external (the main thread's state sampled from /proc every 80 ms: start and end each within ±40 ms)"
        )
        #expect(lines.contains { $0.contains("DiskCache.waitForSlowDisk()") })
    }

    @Test func textStallAlreadyInProgressAndUnfinished() {
        var reporter = AttachedRendering(json: false, mode: .external, samplingInterval: 80_000_000)
        let lines = reporter.render(sampleStall(end: nil), startedBeforeAttach: true).split(separator: "\n")
        #expect(lines[0].contains(": unfinished (still stalled when stallwatch detached)"))
        #expect(lines[1].hasPrefix("  already stalled when stallwatch attached at "))
    }

    @Test func textAgentModeKeepsTheRunLoopPhase() {
        var reporter = AttachedRendering(json: false, mode: .agent, samplingInterval: 80_000_000)
        let lines = reporter.render(sampleStall()).split(separator: "\n").map(String.init)
        #expect(lines[1].contains("in afterWaiting"))
        #expect(lines[2] == "  mode: agent (the process's own agent timed its run loop's transitions exactly)")
    }

    @Test func textSummaryEndsWithHowTheSessionEnded() {
        var reporter = AttachedRendering(json: false, mode: .agent, samplingInterval: nil)
        let summary = RunSummary(
            stalls: [], runNanoseconds: 5_000_000_000, watchedPids: [4242], exitStatus: nil, warnings: [])
        let detached = reporter.render(summary, pid: 4242, processName: "MyDaemon", ending: .signal(2))
        #expect(
            detached.hasSuffix(
                "stallwatch: detached from pid 4242 (MyDaemon) after 5.0 s (Ctrl-C, SIGINT); it keeps running\n"))
        #expect(!detached.contains("workload exited"))
        let exited = reporter.render(summary, pid: 4242, processName: "MyDaemon", ending: .exited)
        #expect(exited.hasSuffix("stallwatch: pid 4242 (MyDaemon) exited after 5.0 s of watching\n"))
    }
}

@Suite struct StackReporterTests {
    func stacks() -> ProcessStacks {
        let main = ThreadStack(
            tid: 4242, name: "MyDaemon", state: ThreadState(state: "R"), frames: sampleStall().samples[0].frames,
            stoppedNanoseconds: 210_000)
        let worker = ThreadStack(
            tid: 4250, name: "io-worker", state: ThreadState(state: "S", syscall: "futex"),
            frames: [Frame(address: 0x7f00_0000_1234, image: "/lib/libc.so.6", offset: 0x1234, symbol: "__futex_wait")],
            stoppedNanoseconds: 90_000)
        return ProcessStacks(
            pid: 4242, processName: "MyDaemon", capturedAt: 1_000_000_000, threadCount: 3, threads: [main, worker],
            elapsedNanoseconds: 18_500_000, warnings: ["the program file /app/MyDaemon was replaced"])
    }

    @Test func textHasAHeadlineThenEachThreadWithItsState() {
        let text = TextReporter(clock: fixedClock, colored: false).render(stacks())
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines[0].hasPrefix("stallwatch: pid 4242 (MyDaemon), 3 threads, 2 shown; each stopped at most 0.21 ms; at ")
        )
        #expect(lines[1] == "stallwatch: warning: the program file /app/MyDaemon was replaced")
        #expect(lines.contains("thread 4242 \"MyDaemon\" (main): running"))
        #expect(lines.contains("thread 4250 \"io-worker\": waiting on a lock (futex)"))
        #expect(lines.contains { $0.contains("DiskCache.waitForSlowDisk()") && $0.contains("at DiskCache.swift:42:9") })
    }

    @Test func jsonIsOneObjectWithEveryThread() throws {
        let record = try decode(StackRecord.self, JSONLinesReporter(clock: fixedClock).render(stacks()))
        #expect(record.event == "stack")
        #expect(record.schemaVersion == JSONLinesReporter.schemaVersion)
        #expect(record.pid == 4242)
        #expect(record.threadCount == 3)
        #expect(record.elapsedMs == 18.5)
        let threads = record.threads
        #expect(threads.map(\.tid) == [4242, 4250])
        #expect(threads.map(\.main) == [true, false])
        #expect(threads[0].stoppedMs == 0.21)
        #expect(threads[1].threadState?.syscall == "futex")
        let frames = threads[0].frames
        #expect(frames[1].symbol == "DiskCache.waitForSlowDisk()")
        #expect(frames[1].line == 42)
        #expect(record.warnings == ["the program file /app/MyDaemon was replaced"])
    }

    /// A deep stack's left-out frames are one line where they were (the outermost keep their depth), and a JSON key.
    @Test func aTruncatedStackSaysWhatWasLeftOut() throws {
        var stacks = stacks()
        let frames = (0..<6).map { index in
            Frame(address: 0x1000 + UInt64(index), image: "/app/deep", offset: 0x10, symbol: "frame\(index)")
        }
        stacks.threads = [
            ThreadStack(
                tid: 4242, name: "deep", state: nil, frames: frames, stoppedNanoseconds: 1,
                truncation: StackTruncation(omittedFrames: 994, resumesAt: 4, maxFrames: 6))
        ]
        let text = TextReporter(clock: fixedClock, colored: false).render(stacks)
        let lines = text.split(separator: "\n").map(String.init)
        let marker = try #require(lines.firstIndex { $0.hasPrefix("   ...   ") })
        #expect(lines[marker].contains("994 frames between the innermost and the outermost left out"))
        #expect(lines[marker - 1].contains("#  3  frame3"))
        #expect(lines[marker + 1].contains("#998  frame4"), "\(lines[marker + 1])")
        let record = try decode(StackRecord.self, JSONLinesReporter(clock: fixedClock).render(stacks))
        let truncated = try #require(record.threads[0].truncated.value)
        #expect(truncated.omittedFrames == 994 && truncated.resumesAtFrame == 4 && truncated.maxFrames == 6)
        let whole = try decode(StackRecord.self, JSONLinesReporter(clock: fixedClock).render(self.stacks()))
        #expect(whole.threads[0].truncated == .null)
    }
}
