// Bad input never loses the rest: each kind of broken line is skipped or read as far as it goes, and named.
import Foundation
import StallwatchTestSupport
import Testing

@testable import StallwatchAggregate

@Suite struct BadInputTests {
    /// Line 1 good, 2 not JSON, 3 an unknown event, 4 an unknown key, 5 a newer schema, 6 schema 1, 7 cut short.
    let lines = [
        RecordFixtures.stall(id: 1),
        "this is not json {",
        #"{"event":"gc-pause","schemaVersion":2,"pid":100}"#,
        RecordFixtures.stall(id: 2, extra: #","gpuMs":12"#),
        RecordFixtures.stall(id: 3, schemaVersion: 4),
        RecordFixtures.stall(id: 4, schemaVersion: 1),
        String(RecordFixtures.stall(id: 5).prefix(180)),
    ]

    @Test func everyGoodRecordIsKeptAndEveryBadLineNamed() throws {
        let collection = merge([("bad.ndjson", lines.joined(separator: "\n")), ("good.ndjson", RecordFixtures.stall())])
        #expect(collection.stalls.map(\.id) == [1, 2, 3, 1])
        let source = collection.sources[0]
        #expect(source.lines == 7)
        #expect(source.records == 5)
        let kinds = source.issues.map { "\($0.line):\($0.kind)" }
        #expect(source.issues.map(\.line) == [2, 3, 4, 5, 6, 7], "\(kinds)")
        #expect(source.issues[1].kind == .unknownEvent("gc-pause"))
        #expect(source.issues[2].kind == .unknownKeys(["gpuMs"]))
        #expect(source.issues[3].kind == .newerSchema(4))
        #expect(source.issues[4].kind == .olderSchema(1))
        #expect(source.issues[5].kind == .truncated)
        let warning = try #require(source.warning)
        #expect(warning.hasPrefix("bad.ndjson: "))
        #expect(warning.contains("not JSON (line 2)"), "\(warning)")
        #expect(warning.contains("'gc-pause' (line 3)"), "\(warning)")
        #expect(warning.contains("'gpuMs' (line 4)"), "\(warning)")
        #expect(warning.contains("schema version 4 records as version 3 (line 5)"), "\(warning)")
        #expect(warning.contains("cut short (line 7)"), "\(warning)")
        #expect(collection.sources[1].warning == nil)
    }

    @Test func aCutLineThatIsNotLastIsNotJSONAndOneWithANewlineIsToo() {
        let cut = String(RecordFixtures.stall().prefix(100))
        let collection = merge([("cut", cut + "\n" + RecordFixtures.stall(id: 2) + "\n" + cut + "\n")])
        #expect(collection.stalls.count == 1)
        #expect(collection.sources[0].issues.map(\.line) == [1, 3])
        #expect(collection.sources[0].issues.allSatisfy { if case .notJSON = $0.kind { true } else { false } })
    }

    @Test func aFileOfNoRecordsHasNone() {
        let collection = merge([("other.json", "{\"hello\":1}\n[1,2,3]\n\n")])
        #expect(collection.sources[0].records == 0)
        #expect(collection.sources[0].lines == 3)
        #expect(collection.sources[0].issues.map(\.kind) == [.notARecord, .notARecord])
        #expect(collection.stalls.isEmpty)
    }

    @Test func trailingGarbageAfterARecordIsNotJSON() {
        let collection = merge([("garbage", RecordFixtures.stall() + " x")])
        #expect(collection.stalls.isEmpty)
        #expect(collection.sources[0].issues.count == 1)
    }

    @Test func outlandishNumbersAndBrokenSurrogatesAreReadWithoutATrap() throws {
        let record = RecordFixtures.stall(
            id: 1, startedAt: "9999-12-31T23:59:59.999Z", durationMs: 1e308, culprit: #"half \ud800\u0041 pair"#,
            extra: #","lengthMs":-5"#
        ).replacingOccurrences(of: #""pid":100"#, with: #""pid":1e300"#)
        let collection = merge([("odd", record + "\n" + RecordFixtures.stall(id: 2, durationMs: -1))])
        // The first has no usable pid: skipped as missing one; the second's negative duration is no duration.
        #expect(collection.stalls.map(\.id) == [2])
        #expect(collection.sources[0].issues.map(\.kind) == [.missingKey("pid")])
        #expect(collection.stalls[0].durationMs == nil)
        let huge = merge([("huge", RecordFixtures.stall(startedAt: "9999-12-31T23:59:59.999Z", durationMs: 1e308))])
        #expect(huge.stalls[0].durationMs == nil, "longer than thirty years is no duration")
        let surrogate = merge([("surrogate", RecordFixtures.stall(culprit: #"half \ud800\u0041 pair"#))])
        #expect(surrogate.frames[0].symbol == "half \u{FFFD}A pair")
    }

    @Test func manyBadLinesAreListedBriefly() throws {
        let text = Array(repeating: "nope", count: 12).joined(separator: "\n") + "\n" + RecordFixtures.stall()
        let warning = try #require(merge([("noisy", text)]).sources[0].warning)
        #expect(warning.contains("lines 1, 2, 3, 4, 5 and 7 more"), "\(warning)")
    }

    @Test func aByteOrderMarkBeforeTheFirstRecordIsSkipped() {
        var merger = StallMerger()
        let bytes = NDJSONInput.byteOrderMark + Array((RecordFixtures.stall(id: 1) + "\n").utf8)
        NDJSONInput.read(bytes: bytes, named: "bom.ndjson", into: &merger)
        let collection = merger.finish()
        #expect(collection.stalls.map(\.id) == [1], "\(collection.sources[0].issues)")
        #expect(collection.sources[0].issues.isEmpty)
    }

    /// Chunks of 7 bytes and a line limit just above the records': lines that span chunks are held up to the
    /// limit, a longer one is skipped to its newline, named once, and the lines after it are read and numbered.
    @Test func aLineLongerThanTheLimitIsSkippedAndTheRestIsRead() throws {
        let record = RecordFixtures.stall(id: 1)
        let limit = record.utf8.count + 16
        let text = [
            record, String(repeating: "x", count: limit + 1), RecordFixtures.stall(id: 2),
            "{" + String(repeating: " ", count: 10 * limit), RecordFixtures.stall(id: 3),
        ].joined(separator: "\n")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lines-\(UUID().uuidString)").path
        defer { unlink(path) }
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        var merger = StallMerger()
        merger.beginSource(named: "long.ndjson")
        var overlong: [Int] = []
        let error = NDJSONInput.read(descriptor: descriptor, into: &merger, longestLine: limit, chunkSize: 7) {
            overlong.append($0)
        }
        #expect(error == nil)
        let collection = merger.finish()
        #expect(overlong == [2, 4])
        #expect(collection.stalls.map(\.id) == [1, 2, 3])
        #expect(collection.sources[0].lines == 5)
        #expect(collection.sources[0].issues.isEmpty, "\(collection.sources[0].issues)")
        // Bytes in memory are cut the same way; the notice names the input and the line.
        var notices: [NDJSONInput.Notice] = []
        var inMemory = StallMerger()
        NDJSONInput.read(bytes: Array(text.utf8), named: "long.ndjson", into: &inMemory, longestLine: limit) {
            notices.append($0)
        }
        #expect(notices == [.overlongLine("long.ndjson", line: 2), .overlongLine("long.ndjson", line: 4)])
        #expect(inMemory.finish().stalls.map(\.id) == [1, 2, 3])
        #expect(notices[0].message.hasPrefix("'long.ndjson' line 2 is longer than 32 MiB"), "\(notices[0].message)")
    }
}
