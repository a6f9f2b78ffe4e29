// Reading and merging hand-made records: fingerprint groups across files, runs and hosts.
import StallwatchAggregate
import StallwatchTestSupport
import Testing

/// Merges each (name, text) as one input.
func merge(_ inputs: [(String, String)]) -> StallCollection {
    var merger = StallMerger()
    for (name, text) in inputs { NDJSONInput.read(bytes: Array(text.utf8), named: name, into: &merger) }
    return merger.finish()
}

@Suite struct StallMergerTests {
    @Test func stallsMergeByFingerprintAcrossFilesRunsAndHosts() throws {
        let first =
            [
                RecordFixtures.stall(id: 1, durationMs: 100, culprit: "A.slow()"),
                RecordFixtures.stall(
                    id: 2, startedAt: "2026-11-29T20:33:12.000Z", durationMs: 300, culprit: "A.slow()"),
                RecordFixtures.stall(id: 3, fingerprint: "bbbbbbbbbbbbbbbb", durationMs: 50, culprit: "B.wait()"),
                RecordFixtures.summary(stalls: 3),
            ].joined(separator: "\n") + "\n"
        let second =
            [
                RecordFixtures.stall(
                    id: 1, pid: 200, host: "beta", startedAt: "2026-11-30T08:00:00.500Z", durationMs: 200,
                    culprit: "A.slow()"),
                RecordFixtures.summary(host: "beta"),
            ].joined(separator: "\n") + "\n"
        let collection = merge([("one.ndjson", first), ("two.ndjson", second)])
        #expect(collection.stalls.count == 4)
        #expect(collection.runs.map(\.host) == ["alpha", "beta"])
        #expect(collection.sources.allSatisfy { $0.issues.isEmpty })
        let groups = FingerprintGroup.groups(of: collection)
        #expect(groups.map(\.fingerprint) == ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"])
        let group = groups[0]
        #expect(group.stalls.count == 3)
        #expect(group.totalMs == 600)
        #expect(group.p50Ms == 200)
        #expect(group.p95Ms == 300)
        #expect(group.maxMs == 300)
        #expect(group.runs == 2)
        #expect(group.hosts == ["alpha", "beta"])
        #expect(RFC3339.text(milliseconds: group.firstSeenMs) == "2026-11-29T20:33:10.287Z")
        #expect(RFC3339.text(milliseconds: group.lastSeenMs) == "2026-11-30T08:00:00.500Z")
        #expect(group.culprit.map { collection.frames[Int($0)].symbol } == "A.slow()")
        #expect(groups[1].totalMs == 50)
    }

    @Test func framesAndStacksAreStoredOnce() {
        let text = (1...50).map { RecordFixtures.stall(id: $0) }.joined(separator: "\n")
        let collection = merge([("many", text)])
        #expect(collection.stalls.count == 50)
        #expect(collection.frames.count == 4)
        #expect(collection.stacks.count == 1)
    }

    @Test func aSummaryEndsARunAndRecordsWithoutAHostAreUnknown() {
        let text = [
            RecordFixtures.stall(host: nil), RecordFixtures.summary(host: nil), RecordFixtures.stall(id: 2, host: nil),
        ].joined(separator: "\n")
        let collection = merge([("two-runs", text)])
        #expect(collection.runs.count == 2)
        #expect(collection.runs.map(\.ordinal) == [1, 2])
        #expect(collection.stalls.map(\.host) == ["unknown", "unknown"])
        #expect(collection.runs[0].runMs == 2000)
    }

    @Test func aStallDetectedButNeverReportedIsUnfinished() {
        let text = [
            RecordFixtures.stall(id: 1, event: "stall-detected"), RecordFixtures.stall(id: 1),
            RecordFixtures.stall(id: 2, event: "stall-detected"),
        ].joined(separator: "\n")
        let collection = merge([("cut", text)])
        #expect(collection.stalls.map(\.id) == [1, 2])
        #expect(collection.stalls.map(\.unfinished) == [false, true])
        #expect(collection.sources[0].stalls == 2)
    }

    @Test func sampleWeightsAddUpToTheDuration() throws {
        let collection = merge([("one", RecordFixtures.stall(durationMs: 600))])
        let stall = try #require(collection.stalls.first)
        #expect(stall.sampleWeightsMs == [320, 80, 200])
        let unfinished = merge([("two", RecordFixtures.stall(durationMs: nil))]).stalls[0]
        #expect(unfinished.knownDurationMs == 480)
        #expect(unfinished.sampleWeightsMs.reduce(0, +) == 480)
        // Records that say how long an unfinished stall had lasted (`lengthMs`) are taken at their word.
        let measured = merge([("three", RecordFixtures.stall(durationMs: nil, extra: #","lengthMs":700"#))]).stalls[0]
        #expect(measured.knownDurationMs == 700)
        #expect(measured.sampleWeightsMs == [320, 80, 300])
    }

    @Test func timestampsReadAndWriteRFC3339() {
        #expect(RFC3339.milliseconds("1970-01-01T00:00:01.5Z") == 1500)
        #expect(
            RFC3339.milliseconds("2026-11-29T21:33:10.287+01:00") == RFC3339.milliseconds("2026-11-29T20:33:10.287Z"))
        #expect(
            RFC3339.text(milliseconds: RFC3339.milliseconds("2024-02-29T23:59:59.999Z")!) == "2024-02-29T23:59:59.999Z")
        #expect(RFC3339.milliseconds("yesterday") == nil)
    }

    @Test func escapedStringsAreDecoded() {
        let symbol = #"quote \" slash \\ snowman \u2603 pair \ud83d\ude00"#
        let text = RecordFixtures.stall(culprit: symbol)
        let collection = merge([("escapes", text)])
        #expect(collection.frames.first?.symbol == "quote \" slash \\ snowman \u{2603} pair \u{1F600}")
        // A string ending in a backslash: the quote after an even number of backslashes ends it.
        let trailing = merge([("backslash", RecordFixtures.stall(culprit: #"ends in \\"#))])
        #expect(trailing.frames.first?.symbol == #"ends in \"#)
        #expect(trailing.stalls.count == 1)
    }
}
