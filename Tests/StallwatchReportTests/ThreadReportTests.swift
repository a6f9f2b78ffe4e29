// Reports of stalls off the main thread (`--thread`): the thread named in the headline and the record, and the
// summary and JUnit counting stalls per thread.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

@Suite struct ThreadReportTests {
    func loopStall(identifier: Int = 1001) -> StallReport {
        var stall = sampleStall()
        stall.identifier = identifier
        stall.tid = 4250
        stall.threadName = "NIO-ELT-0-#1"
        return stall
    }

    func summary(_ stalls: [StallReport]) -> RunSummary {
        RunSummary(stalls: stalls, runNanoseconds: 4_000_000_000, watchedPids: [4242], exitStatus: 0, warnings: [])
    }

    @Test func theHeadlineAndTheRecordNameTheThread() throws {
        var text = TextReporter(clock: fixedClock, colored: false)
        let rendered = text.render(loopStall())
        #expect(rendered.hasPrefix("stallwatch: stall #1001 in MyDaemon (pid 4242), thread NIO-ELT-0-#1 (tid 4250): "))
        var main = TextReporter(clock: fixedClock, colored: false)
        #expect(main.render(sampleStall()).hasPrefix("stallwatch: stall #3 in MyDaemon (pid 4242): "))
        var json = JSONLinesReporter(clock: fixedClock)
        let record = try JSONLines.decode(StallRecord.self, from: json.render(loopStall()))
        #expect(record.tid == 4250)
        #expect(record.threadName == "NIO-ELT-0-#1")
    }

    @Test func summariesCountStallsPerThread() throws {
        let stalls = [sampleStall(), loopStall(), loopStall(identifier: 1002)]
        let json = JSONLinesReporter(clock: fixedClock).render(summary(stalls))
        let record = try JSONLines.decode(SummaryRecord.self, from: json)
        let threads = try #require(record.threads)
        #expect(threads.map(\.threadName) == ["NIO-ELT-0-#1", "main"])
        #expect(threads.map(\.stalls) == [2, 1])
        #expect(threads.first?.tid == 4250)
        var text = TextReporter(clock: fixedClock, colored: false)
        let rendered = text.render(summary(stalls))
        #expect(rendered.contains("  stalls by thread:\n"))
        #expect(rendered.contains("×  NIO-ELT-0-#1 (tid 4250) of pid 4242\n"))
        #expect(rendered.contains("×  main thread of pid 4242\n"))
        let mainOnly = JSONLinesReporter(clock: fixedClock).render(summary([sampleStall()]))
        #expect(!mainOnly.contains("\"threads\""), "summaries without --thread stay as they were")
    }

    @Test func junitPropertiesCountStallsPerThread() throws {
        let stalls = [sampleStall(), loopStall()]
        let xml = JUnitReport(
            stalls: stalls, summary: summary(stalls), budget: StallBudget(), baseline: [], startOfRun: 1_000_000_000,
            endOfRun: 5_000_000_000, command: "./MyDaemon", clock: fixedClock
        ).render()
        #expect(try schemaProblem(xml) == nil)
        #expect(xml.contains(#"<property name="thread.NIO-ELT-0-#1 (tid 4250).stalls" value="1"/>"#))
        #expect(xml.contains(#"<property name="thread.NIO-ELT-0-#1 (tid 4250).totalStallMs" value="612"/>"#))
        #expect(xml.contains(#"<property name="thread.main.stalls" value="1"/>"#))
    }
}
