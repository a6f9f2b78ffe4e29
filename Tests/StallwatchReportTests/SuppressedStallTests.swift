// A stall `--rate-limit` shortened, as JSON and text show it: its identity, length, fingerprint and culprit, no stack.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

@Suite struct SuppressedStallTests {
    func suppressedStall() -> StallReport {
        var stall = sampleStall()
        stall.suppressed = true
        return stall
    }

    @Test func theRecordKeepsEveryKeyButTheStack() throws {
        let reporter = JSONLinesReporter(clock: fixedClock)
        let full = try JSONLines.decode(StallRecord.self, from: reporter.render(sampleStall()))
        let line = reporter.render(suppressedStall())
        // Decodes as any version-2 stall record does: a reader that knows no `suppressed` sees a stall without samples.
        let short = try JSONLines.decode(StallRecord.self, from: line)
        #expect(short.suppressed == true && full.suppressed == nil)
        #expect(short.samples.isEmpty && !full.samples.isEmpty)
        #expect(short.fingerprint == full.fingerprint)
        #expect(short.culprit == full.culprit && short.culprit?.symbol == "DiskCache.waitForSlowDisk()")
        #expect(short.durationMs == full.durationMs && short.id == full.id && short.callout == "timer")
        #expect(line.count * 2 < reporter.render(sampleStall()).count, "\(line.count) bytes")
    }

    @Test func theDetectedRecordIsShortToo() throws {
        let reporter = JSONLinesReporter(clock: fixedClock)
        let detected = try JSONLines.decode(DetectedRecord.self, from: reporter.renderDetected(suppressedStall()))
        #expect(detected.suppressed == true && detected.samples.isEmpty)
        #expect(detected.culprit?.symbol == "DiskCache.waitForSlowDisk()")
        let full = try JSONLines.decode(DetectedRecord.self, from: reporter.renderDetected(sampleStall()))
        #expect(full.suppressed == nil && full.samples.count == 1)
    }

    @Test func theSummaryCountsThem() throws {
        var other = sampleStall()
        other.identifier = 4
        let summary = RunSummary(
            stalls: [sampleStall(), other, suppressedStall()], runNanoseconds: 4_000_000_000, watchedPids: [4242],
            exitStatus: 0, warnings: [])
        let record = try JSONLines.decode(
            SummaryRecord.self, from: JSONLinesReporter(clock: fixedClock).render(summary))
        #expect(record.stalls == 3 && record.suppressed == 1)
        var text = TextReporter(clock: fixedClock, colored: false)
        #expect(text.render(summary).hasPrefix("stallwatch: 3 stalls, ") == true)
        #expect(text.render(summary).contains(", 1 shortened by --rate-limit"))
    }

    @Test func textGivesItOneLine() {
        var text = TextReporter(clock: fixedClock, colored: false)
        let line = text.render(suppressedStall())
        #expect(
            line
                == "stallwatch: stall #3 in MyDaemon (pid 4242): 612 ms in a timer callback, in"
                + " DiskCache.waitForSlowDisk() (fingerprint \(sampleStall().fingerprint); over --rate-limit: one"
                + " sample, report shortened)\n")
        #expect(text.renderDetected(suppressedStall()).contains("(over --rate-limit: shortened)"))
    }
}
