// The text and JSON-lines formats: what a person and a program read about each stall.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

/// A finished stall with a ptrace capture whose culprit is in the program.
func sampleStall(end: UInt64? = 1_612_300_000) -> StallReport {
    let frames = [
        Frame(
            address: 0x7f00_0000_1234, image: "/usr/lib/x86_64-linux-gnu/libc.so.6", offset: 0x1234,
            symbol: "__nanosleep"),
        Frame(
            address: 0x5500_0000_2000, image: "/app/MyDaemon", offset: 0x2000, symbol: "DiskCache.waitForSlowDisk()",
            file: "/src/DiskCache.swift", line: 42, column: 9),
        Frame(
            address: 0x7f00_0000_5000, image: "/opt/swift/usr/lib/swift/linux/libFoundation.so", offset: 0x5000,
            symbol: "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__"),
        Frame(address: 0x5500_0000_3000, image: "/app/MyDaemon", offset: 0x3000, symbol: "main"),
    ]
    return StallReport(
        identifier: 3, pid: 4242, tid: 4242, processName: "MyDaemon", phase: .afterWaiting,
        start: 1_000_000_000, end: end, detectedAt: 1_240_500_000, thresholdNanoseconds: 80_000_000, count: 3,
        captureMethod: .ptrace,
        samples: [Sample(frames: frames, capturedAt: 1_241_000_000, stoppedNanoseconds: 120_000)])
}

let fixedClock = WallClock(offsetSeconds: 1_795_000_000)

@Suite struct JSONLinesReporterTests {
    func parse<Record: Decodable>(_ type: Record.Type, _ line: String) throws -> Record {
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().contains("\n") == false, "one record per line")
        return try JSONLines.decode(type, from: line)
    }

    @Test func stallRecordFollowsTheSchema() throws {
        var reporter = JSONLinesReporter(clock: fixedClock)
        let line = reporter.render(sampleStall())
        #expect(line.hasPrefix("{\"event\":\"stall\""))
        let record = try parse(StallRecord.self, line)
        #expect(record.schemaVersion == 3)
        #expect(record.callout == "timer")
        #expect(record.fingerprint.count == 16)
        #expect(record.confidence.level == "high")
        #expect(record.thread == .null, "no thread verdict without CPU time or states")
        #expect(record.durationMs == .value(612.3))
        #expect(record.thresholdMs == 80)
        #expect(record.activity == "afterWaiting")
        #expect(record.unfinished == false)
        #expect(record.detectedAfterMs == 240.5)
        #expect(record.capture.method == "ptrace")
        let frames = try #require(record.samples.first?.frames)
        #expect(frames.count == 4)
        #expect(frames[1].address == "0x550000002000")
        #expect(frames[1].offset == "0x2000")
        #expect(frames[1].image == "/app/MyDaemon")
        #expect(frames[1].symbol == "DiskCache.waitForSlowDisk()")
        #expect(frames[1].line == 42)
        let culprit = try #require(record.culprit)
        #expect(culprit.symbol == "DiskCache.waitForSlowDisk()")
        #expect(record.startedAt.hasSuffix("Z"))
    }

    @Test func unfinishedStallHasNullDuration() throws {
        var reporter = JSONLinesReporter(clock: fixedClock)
        let record = try parse(StallRecord.self, reporter.render(sampleStall(end: nil)))
        #expect(record.durationMs == .null)
        #expect(record.unfinished == true)
    }

    @Test func summaryRecord() throws {
        let summary = RunSummary(
            stalls: [sampleStall(), sampleStall(end: nil)], runNanoseconds: 4_000_000_000, watchedPids: [4242],
            exitStatus: 0, warnings: ["something to know"])
        var reporter = JSONLinesReporter(clock: fixedClock)
        let line = reporter.render(summary)
        #expect(line.hasPrefix("{\"event\":\"summary\""))
        let record = try parse(SummaryRecord.self, line)
        #expect(record.stalls == 2)
        #expect(record.unfinished == 1)
        #expect(record.totalStallMs == 612.3)
        #expect(record.exitStatus == .value(0))
        #expect(record.warnings == ["something to know"])
        #expect(record.medianStallMs == 612.3)
        let culprits = record.topCulprits
        #expect(culprits.first?.symbol == "DiskCache.waitForSlowDisk()")
        #expect(culprits.first?.stalls == 2)
    }

    @Test func stringsAreEscaped() {
        let value = JSONValue.object([("s", .string("a\"b\\c\nd\u{1}"))])
        #expect(value.serialized() == #"{"s":"a\"b\\c\nd\u0001"}"#)
    }
}

@Suite struct TextReporterTests {
    func text(_ stall: StallReport, colored: Bool = false) -> String {
        var reporter = TextReporter(clock: fixedClock, colored: colored)
        return reporter.render(stall)
    }

    @Test func stallBlockNamesLengthCalloutCulpritAndStack() {
        var stall = sampleStall()
        stall.threadActivity = ThreadActivity(cpuPercent: 2, verdict: .blocked, blockedOn: .sleep)
        let text = text(stall)
        #expect(
            text.contains("stall #3 in MyDaemon (pid 4242): 612 ms in a timer callback, blocked, sleeping (2% CPU)"))
        #expect(text.contains("afterWaiting"))
        #expect(text.contains("detected after 241 ms (3 × 80 ms)"))
        #expect(text.contains("1 sample by ptrace, thread stopped 0.12 ms median"))
        #expect(text.contains("fingerprint \(stall.fingerprint)"))
        #expect(text.contains("culprit: DiskCache.waitForSlowDisk() at DiskCache.swift:42:9"))
        #expect(text.contains("#  0  __nanosleep"))
        #expect(text.contains("MyDaemon +0x2000"))
        #expect(!text.contains("\u{1B}["), "no colour when disabled")
    }

    @Test func severalSamplesShowTheTimelineAndTheShare() {
        var stall = sampleStall()
        let other = Sample(
            frames: [Frame(address: 9, image: "/app/MyDaemon", offset: 9, symbol: "DiskCache.flush()")],
            capturedAt: 1_400_000_000)
        stall.samples = [stall.samples[0], stall.samples[0], other]
        let text = text(stall)
        #expect(text.contains("(in 2 of 3 samples)"))
        #expect(text.contains("samples: +241–241 ms DiskCache.waitForSlowDisk (2), +400 ms DiskCache.flush"))
    }

    @Test func repeatsAreGroupedNeverDropped() {
        var reporter = TextReporter(clock: fixedClock, colored: false)
        let first = reporter.render(sampleStall())
        var second = sampleStall()
        second.identifier = 4
        var third = sampleStall()
        third.identifier = 5
        let secondText = reporter.render(second)
        let thirdText = reporter.render(third)
        #expect(first.contains("culprit:"))
        #expect(secondText.split(separator: "\n").count == 1)
        #expect(secondText.contains("stall #4 in MyDaemon (pid 4242): 612 ms, same as stall #3"))
        #expect(thirdText.contains("×3, 1837 ms in all"))
    }

    @Test func unfinishedStallSaysSo() {
        #expect(text(sampleStall(end: nil)).contains("unfinished"))
    }

    @Test func lateWatcherIsCalledOut() {
        var stall = sampleStall()
        stall.detectedAt = stall.start + 2_000_000_000
        #expect(text(stall).contains("caution: the watcher woke 1760 ms late"))
    }

    @Test func colourOnlyWhenAskedFor() {
        #expect(text(sampleStall(), colored: true).contains("\u{1B}[1m"))
    }

    @Test func summaryLines() {
        var longer = sampleStall(end: 2_000_000_000)
        longer.identifier = 4
        let summary = RunSummary(
            stalls: [sampleStall(), longer], runNanoseconds: 4_000_000_000, watchedPids: [1], exitStatus: 3,
            warnings: [])
        var reporter = TextReporter(clock: fixedClock, colored: false)
        let text = reporter.render(summary)
        #expect(
            text.contains("2 stalls, 1612 ms stalled (40.3% of 4.0 s), longest 1000 ms; exit status 3"))
        #expect(text.contains("stall length: median 612 ms, p95 1000 ms"))
        #expect(text.contains("1612 ms    2×  DiskCache.waitForSlowDisk()"))
    }
}

@Suite struct WallClockTests {
    @Test func formatsRFC3339InUTC() {
        // Epoch, a leap day, and the last millisecond of a year: the civil-date conversion at its edges.
        let clock = WallClock(offsetSeconds: 0)
        #expect(clock.rfc3339(monotonic: 0) == "1970-01-01T00:00:00.000Z")
        #expect(clock.rfc3339(monotonic: 951_782_400_500_000_000) == "2000-02-29T00:00:00.500Z")
        #expect(clock.rfc3339(monotonic: 1_798_761_599_999_000_000) == "2026-12-31T23:59:59.999Z")
    }
}

/// Names, symbols and notes come from the watched process: text output must never let them forge a line or reach
/// the terminal as an escape sequence.
@Suite struct UntrustedTextTests {
    @Test func controlCharactersInNamesAreWrittenAsVisibleEscapes() {
        var stall = sampleStall()
        stall.processName = "evil\nstallwatch: 0 stalls\u{1B}]0;owned\u{07}"
        stall.samples[0].frames[1].symbol = "f()\u{1B}[31m\u{202E}"
        var reporter = TextReporter(clock: fixedClock, colored: true)
        let text = reporter.render(stall)
        #expect(!text.contains("\nstallwatch: 0 stalls"), "a name forged a line:\n\(text)")
        #expect(text.contains("evil\\nstallwatch: 0 stalls\\x1b]0;owned\\x07"))
        #expect(text.contains("f()\\x1b[31m\\u{202e}"))
        #expect(!text.unicodeScalars.contains { $0 == "\u{07}" || $0 == "\u{202E}" })
        // The reporter's own bold stays bold.
        #expect(text.hasPrefix("\u{1B}[1mstallwatch: stall #3 in evil\\n"))
    }

    @Test func everyControlThatReordersTextIsEscaped() {
        let controls: [Unicode.Scalar] = [
            "\u{061C}", "\u{200E}", "\u{200F}", "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}",
            "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        ]
        for control in controls {
            let escaped = TerminalText.escaped("a\(control)b")
            #expect(escaped == "a\\u{\(String(control.value, radix: 16))}b", "U+\(String(control.value, radix: 16))")
        }
    }

    @Test func stackThreadNamesAndSummaryWarningsAreEscapedToo() {
        let stacks = ProcessStacks(
            pid: 7, processName: "p", capturedAt: 0, threadCount: 1,
            threads: [ThreadStack(tid: 7, name: "a\nthread 1 \"x\"", state: nil, frames: [], stoppedNanoseconds: nil)],
            elapsedNanoseconds: 0, warnings: [])
        var reporter = TextReporter(clock: fixedClock, colored: false)
        let text = reporter.render(stacks)
        #expect(text.contains("thread 7 \"a\\nthread 1 \"x\"\""), "\(text)")
        #expect(!text.contains("\nthread 1 "))
        let summary = RunSummary(
            stalls: [], runNanoseconds: 1_000_000_000, watchedPids: [7], exitStatus: 0,
            warnings: ["the agent did not watch pid 7: \u{1B}[2J"])
        #expect(reporter.render(summary).contains("\\x1b[2J"))
    }
}
