// What `--rate-limit` and `--rotate` leave for `stallwatch report`: short records counted in their fingerprint's group,
// and the files of a rotated set read oldest first as one stream.
import Foundation
import StallwatchAggregate
import StallwatchTestSupport
import Testing

@Suite struct SuppressedRecordTests {
    /// A short record as `--rate-limit` writes it: every key but the samples, and `suppressed`.
    static func suppressed(id: Int, durationMs: Double = 250) -> String {
        RecordFixtures.stall(id: id, durationMs: durationMs, samples: [], extra: #","suppressed":true"#)
    }

    @Test func theyCountInTheirFingerprintsGroupWithoutAStack() throws {
        let text =
            [
                RecordFixtures.stall(id: 1, durationMs: 600), RecordFixtures.stall(id: 2, durationMs: 400),
                Self.suppressed(id: 3), Self.suppressed(id: 4), RecordFixtures.summary(stalls: 4),
            ].joined(separator: "\n") + "\n"
        let collection = merge([("limited.ndjson", text)])
        #expect(collection.sources.allSatisfy { $0.issues.isEmpty }, "\(collection.sources.map(\.issues))")
        #expect(collection.stalls.map(\.suppressed) == [false, false, true, true])
        let groups = FingerprintGroup.groups(of: collection)
        try #require(groups.count == 1)
        #expect(groups[0].stalls.count == 4 && groups[0].suppressed == 2)
        #expect(groups[0].totalMs == 1500)
        #expect(groups[0].culprit.map { collection.frames[Int($0)].symbol } == "Work.crunch()")
    }
}

@Suite struct RotatedFilesTests {
    @Test func aShellsGlobOrderBecomesOldestFirst() {
        let order = RotatedFiles.order([
            "out", "out.1", "out.10", "out.2", "out.3", "out.4", "out.5", "out.6",
            "out.7", "out.8", "out.9",
        ])
        #expect(
            order.map(\.name) == [
                "out.10", "out.9", "out.8", "out.7", "out.6", "out.5", "out.4", "out.3",
                "out.2", "out.1", "out",
            ])
        #expect(order.map(\.continuing) == [false] + Array(repeating: true, count: 10))
    }

    @Test func otherInputsKeepTheirPlaceAndSetsTakeTheirFirstMembers() {
        let order = RotatedFiles.order(["a.ndjson", "s/run.ndjson", "b.ndjson", "s/run.ndjson.1", "-", "c.ndjson.2"])
        #expect(order.map(\.name) == ["a.ndjson", "s/run.ndjson.1", "s/run.ndjson", "b.ndjson", "-", "c.ndjson.2"])
        #expect(order.map(\.continuing) == [false, false, true, false, false, false])
    }

    @Test func namesThatOnlyLookNumberedStayAlone() {
        let names = ["v1.2", "x.0", ".5", "dir.1/", "out.1a", "plain"]
        let order = RotatedFiles.order(names)
        #expect(order.map(\.name) == names)
        #expect(order.allSatisfy { !$0.continuing })
    }

    /// Records as `--rotate` splits them: each stall's `stall-detected` in one file and its `stall` in the next.
    static let files = [
        ("out.2", [RecordFixtures.stall(id: 1, event: "stall-detected")]),
        ("out.1", [RecordFixtures.stall(id: 1), RecordFixtures.stall(id: 2, event: "stall-detected")]),
        ("out", [RecordFixtures.stall(id: 2, durationMs: 300), RecordFixtures.summary(stalls: 2)]),
    ]

    @Test func aStallAcrossTwoFilesIsOneStallOfOneRun() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-set-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, lines) in Self.files {
            try (lines.joined(separator: "\n") + "\n").write(
                toFile: directory + "/" + name, atomically: false, encoding: .utf8)
        }
        var merger = StallMerger()
        // As `report out*` gives them.
        NDJSONInput.read(["out", "out.1", "out.2"].map { directory + "/" + $0 }, into: &merger)
        let collection = merger.finish()
        #expect(collection.stalls.map(\.id) == [1, 2])
        #expect(collection.stalls.allSatisfy { !$0.unfinished })
        #expect(collection.stalls.map(\.durationMs) == [600, 300])
        #expect(collection.runs.count == 1 && collection.runs[0].runMs == 2000)
        #expect(collection.sources.map { ($0.name as NSString).lastPathComponent } == ["out.2", "out.1", "out"])
        #expect(collection.sources.map(\.stalls) == [0, 1, 1])
    }

    @Test func readAsSeparateInputsTheSameFilesCountAStallTwice() {
        // What the ordering prevents: each file alone ends its stalls detected but not ended.
        let collection = merge(Self.files.map { ($0.0, $0.1.joined(separator: "\n") + "\n") })
        #expect(collection.stalls.count == 4)
        #expect(collection.runs.count == 3)
    }
}
