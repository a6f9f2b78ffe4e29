// The text and JSON-lines formats: what a person and a program read about each stall.
import Foundation
import StallwatchCore
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
    func parse(_ line: String) throws -> [String: Any] {
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().contains("\n") == false, "one record per line")
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any])
    }

    @Test func stallRecordFollowsTheSchema() throws {
        let line = JSONLinesReporter(clock: fixedClock).render(sampleStall())
        #expect(line.hasPrefix("{\"event\":\"stall\""))
        let record = try parse(line)
        #expect(record["schemaVersion"] as? Int == 1)
        #expect(record["durationMs"] as? Double == 612.3)
        #expect(record["thresholdMs"] as? Double == 80)
        #expect(record["activity"] as? String == "afterWaiting")
        #expect(record["unfinished"] as? Bool == false)
        #expect(record["detectedAfterMs"] as? Double == 240.5)
        let capture = try #require(record["capture"] as? [String: Any])
        #expect(capture["method"] as? String == "ptrace")
        let samples = try #require(record["samples"] as? [[String: Any]])
        let frames = try #require(samples.first?["frames"] as? [[String: Any]])
        #expect(frames.count == 3)
        #expect(frames[1]["address"] as? String == "0x550000002000")
        #expect(frames[1]["offset"] as? String == "0x2000")
        #expect(frames[1]["image"] as? String == "/app/MyDaemon")
        #expect(frames[1]["symbol"] as? String == "DiskCache.waitForSlowDisk()")
        #expect(frames[1]["line"] as? Int == 42)
        let culprit = try #require(record["culprit"] as? [String: Any])
        #expect(culprit["symbol"] as? String == "DiskCache.waitForSlowDisk()")
        #expect((record["startedAt"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func unfinishedStallHasNullDuration() throws {
        let record = try parse(JSONLinesReporter(clock: fixedClock).render(sampleStall(end: nil)))
        #expect(record["durationMs"] is NSNull)
        #expect(record["unfinished"] as? Bool == true)
    }

    @Test func summaryRecord() throws {
        let summary = RunSummary(
            stalls: [sampleStall(), sampleStall(end: nil)], runNanoseconds: 4_000_000_000, watchedPids: [4242],
            exitStatus: 0, warnings: ["something to know"])
        let line = JSONLinesReporter(clock: fixedClock).render(summary)
        #expect(line.hasPrefix("{\"event\":\"summary\""))
        let record = try parse(line)
        #expect(record["stalls"] as? Int == 2)
        #expect(record["unfinished"] as? Int == 1)
        #expect(record["totalStallMs"] as? Double == 612.3)
        #expect(record["exitStatus"] as? Int == 0)
        #expect(record["warnings"] as? [String] == ["something to know"])
    }

    @Test func stringsAreEscaped() {
        let value = JSONValue.object([("s", .string("a\"b\\c\nd\u{1}"))])
        #expect(value.serialized() == #"{"s":"a\"b\\c\nd\u0001"}"#)
    }
}

@Suite struct TextReporterTests {
    @Test func stallBlockNamesLengthCulpritAndStack() {
        let text = TextReporter(clock: fixedClock, colored: false).render(sampleStall())
        #expect(text.contains("stall #3 in MyDaemon (pid 4242): 612 ms"))
        #expect(text.contains("afterWaiting"))
        #expect(text.contains("detected after 241 ms (3 × 80 ms)"))
        #expect(text.contains("stopped 0.12 ms"))
        #expect(text.contains("culprit: DiskCache.waitForSlowDisk() at DiskCache.swift:42:9"))
        #expect(text.contains("#  0  __nanosleep"))
        #expect(text.contains("MyDaemon +0x2000"))
        #expect(!text.contains("\u{1B}["), "no colour when disabled")
    }

    @Test func unfinishedStallSaysSo() {
        let text = TextReporter(clock: fixedClock, colored: false).render(sampleStall(end: nil))
        #expect(text.contains("unfinished"))
    }

    @Test func colourOnlyWhenAskedFor() {
        let text = TextReporter(clock: fixedClock, colored: true).render(sampleStall())
        #expect(text.contains("\u{1B}[1m"))
    }

    @Test func summaryLine() {
        let summary = RunSummary(
            stalls: [sampleStall()], runNanoseconds: 4_000_000_000, watchedPids: [1], exitStatus: 3, warnings: [])
        let text = TextReporter(clock: fixedClock, colored: false).render(summary)
        #expect(
            text.contains("1 stall, 612 ms stalled (15.3% of 4.0 s), longest 612 ms; workload exited with status 3"))
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
