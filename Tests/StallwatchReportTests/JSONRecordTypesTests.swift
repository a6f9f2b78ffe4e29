// The test-support record types are as strict as the tests need: a key of the wrong type or a missing required key
// fails, and null is told apart from absent.
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

@Suite struct JSONRecordTypesTests {
    /// A real stall line with one key's value replaced by `replacement` (raw JSON).
    func stallLine(replacing key: String, with replacement: String) throws -> String {
        let line = JSONLinesReporter(clock: fixedClock).render(sampleStall())
        let start = try #require(line.firstRange(of: "\"\(key)\":"))
        let end = try #require(line[start.upperBound...].firstIndex { $0 == "," || $0 == "}" })
        return String(line[..<start.upperBound]) + replacement + String(line[end...])
    }

    @Test func aKeyOfTheWrongTypeFails() throws {
        #expect(throws: JSONLineError.self) {
            try JSONLines.decode(StallRecord.self, from: try stallLine(replacing: "unfinished", with: "\"false\""))
        }
        #expect(throws: JSONLineError.self) {
            try JSONLines.decode(StallRecord.self, from: try stallLine(replacing: "count", with: "3.5"))
        }
        // Nullable and Optional keys are typed too.
        #expect(throws: JSONLineError.self) {
            try JSONLines.decode(StallRecord.self, from: try stallLine(replacing: "durationMs", with: "\"612\""))
        }
        #expect(throws: JSONLineError.self) {
            try JSONLines.decode(StallRecord.self, from: try stallLine(replacing: "callout", with: "7"))
        }
    }

    @Test func aMissingRequiredKeyFails() throws {
        let line = JSONLinesReporter(clock: fixedClock).render(sampleStall())
        let without = line.replacing("\"fingerprint\":\"\(sampleStall().fingerprint)\",", with: "")
        #expect(without != line)
        #expect(throws: JSONLineError.self) { try JSONLines.decode(StallRecord.self, from: without) }
    }

    @Test func nullIsToldApartFromAbsent() throws {
        let stall = try JSONLines.decode(
            StallRecord.self, from: JSONLinesReporter(clock: fixedClock).render(sampleStall(end: nil)))
        #expect(stall.durationMs == .null)
        #expect(stall.resolutionMs == .absent, "run's stall records have no resolutionMs")
        let finished = try JSONLines.decode(StallRecord.self, from: try stallLine(replacing: "durationMs", with: "5"))
        #expect(finished.durationMs == .value(5))
    }

    @Test func linesDecodeByEventAndUnknownEventsAreKept() throws {
        let reporter = JSONLinesReporter(clock: fixedClock)
        let summary = RunSummary(
            stalls: [sampleStall()], runNanoseconds: 4_000_000_000, watchedPids: [4242], exitStatus: 0, warnings: [])
        let text =
            "not a record\n" + reporter.renderDetected(sampleStall()) + reporter.render(sampleStall())
            + "{\"event\":\"later\",\"schemaVersion\":9}\n" + reporter.render(summary)
        let records = try JSONLines.records(in: text)
        #expect(records.map(\.event) == ["stall-detected", "stall", "later", "summary"])
        #expect(records[0].detected?.id == 3)
        #expect(records[1].stall?.id == 3)
        #expect(records[2] == .other(event: "later"))
        #expect(records[3].summary?.watchedPids == [4242])
    }

    @Test func aBadLineIsNamed() throws {
        let text = "{\"event\":\"x\"}\n{\"event\":\"summary\",\"stalls\":\"two\"}\n"
        let error = try #require(throws: JSONLineError.self) { try JSONLines.records(in: text) }
        #expect(error.lineNumber == 2)
        #expect(error.description.contains("line 2"), "\(error)")
    }
}
