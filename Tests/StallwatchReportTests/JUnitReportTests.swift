// JUnit output: valid against the common JUnit schema, one case for the run and one per distinct stall.
import Foundation
import StallwatchCore
import Testing

@testable import StallwatchReport

/// Validates XML against the schema in Tests/Fixtures with xmllint; returns xmllint's complaint, or nil.
func schemaProblem(_ xml: String) throws -> String? {
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("junit-\(UUID().uuidString).xml")
    try xml.write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/xmllint")
    process.arguments = ["--noout", "--schema", fixtures.appendingPathComponent("junit.xsd").path, file.path]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return process.terminationStatus == 0 ? nil : message
}

@Suite struct JUnitReportTests {
    func junit(_ stalls: [StallReport], budget: StallBudget, baseline: Set<String> = []) -> String {
        let summary = RunSummary(
            stalls: stalls, runNanoseconds: 4_000_000_000, watchedPids: [4242], exitStatus: 0, warnings: [])
        return JUnitReport(
            stalls: stalls, summary: summary, budget: budget, baseline: baseline, startOfRun: 1_000_000_000,
            endOfRun: 5_000_000_000, command: "./MyDaemon --port 8080 <&>", clock: fixedClock
        ).render()
    }

    func repeatStall(_ identifier: Int) -> StallReport {
        var stall = sampleStall()
        stall.identifier = identifier
        return stall
    }

    @Test func brokenBudgetFailsTheRunAndTheStallWithItsStack() throws {
        let xml = junit([sampleStall(), repeatStall(4)], budget: StallBudget(maxStall: 500_000_000))
        #expect(try schemaProblem(xml) == nil)
        #expect(xml.contains(#"<testsuites name="stallwatch" tests="2" failures="2""#))
        #expect(xml.contains("stall budget broken: 2 stalls longer than 500 ms"))
        #expect(xml.contains(#"name="DiskCache.waitForSlowDisk() ["#))
        #expect(xml.contains("#1 DiskCache.waitForSlowDisk() (MyDaemon +0x2000) at /src/DiskCache.swift:42"))
        #expect(xml.contains("stall #3 in MyDaemon (pid 4242): 612 ms\nstall #4 in MyDaemon (pid 4242): 612 ms"))
        #expect(xml.contains("./MyDaemon --port 8080 &lt;&amp;&gt;"), "attributes are escaped")
    }

    @Test func withinBudgetEverythingPassesButStallsAreListed() throws {
        let xml = junit([sampleStall()], budget: StallBudget(maxStall: 5_000_000_000))
        #expect(try schemaProblem(xml) == nil)
        #expect(xml.contains(#"failures="0""#))
        #expect(!xml.contains("<failure"))
        #expect(xml.contains("stall #3 in MyDaemon (pid 4242): 612 ms"))
    }

    @Test func baselineStallsAreSkipped() throws {
        let known = sampleStall()
        let xml = junit([known], budget: StallBudget(failOnStall: true), baseline: [known.fingerprint])
        #expect(try schemaProblem(xml) == nil)
        #expect(xml.contains(#"skipped="1""#))
        #expect(xml.contains("<skipped message=\"a known stall: its fingerprint is in the baseline\"/>"))
        #expect(!xml.contains("<failure"))
    }

    @Test func noStallsIsOnePassingCase() throws {
        let xml = junit([], budget: StallBudget(failOnStall: true))
        #expect(try schemaProblem(xml) == nil)
        #expect(xml.contains(#"tests="1" failures="0""#))
    }

    @Test func schemaCatchesABrokenDocument() throws {
        // The validator itself must reject what readers reject: a test case without a classname.
        let broken = junit([], budget: StallBudget()).replacingOccurrences(
            of: #" classname="stallwatch.run""#, with: "")
        #expect(try schemaProblem(broken) != nil)
    }

    @Test func controlCharactersNeverReachTheXML() {
        #expect(JUnitReport.escape("a\u{1}b\u{1B}[1mc") == "ab[1mc")
    }
}
