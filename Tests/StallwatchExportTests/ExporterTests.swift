// Each export of a known collection, parsed back and checked.
import Foundation
import StallwatchAggregate
import StallwatchTestSupport
import Testing

@testable import StallwatchExport

@Suite struct FoldedStacksTests {
    @Test func stacksAreOutermostFirstWithStalledMilliseconds() {
        let text = String(decoding: FoldedStacksExporter().export(sampleCollection()), as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "__libc_start_main;main;CFRunLoopRunSpecific;A.slow() 1200",
                "__libc_start_main;main;CFRunLoopRunSpecific;B.wait() 300",
            ])
    }

    @Test func aSemicolonInANameCannotSplitAFrame() {
        #expect(FoldedStacksExporter.clean("f(a;b)\nx") == #"f(a:b)\nx"#)
    }

    @Test func controlCharactersInNamesAreWrittenAsVisibleEscapes() {
        let names = untrustedNamesCollection()
        let text = String(decoding: FoldedStacksExporter().export(names), as: UTF8.self)
        #expect(!text.unicodeScalars.contains(where: isUnsafe), "\(text.debugDescription)")
        // The escapes of every text output; the name's own `;` is a `:`, as in any name.
        #expect(text.contains(#"evil\x1b]0:t\x07\x7f\x9b\u{202e}\u{2066}\u{200f}\u{61c}()"#), "\(text)")
        #expect(text.split(separator: "\n").count == 1, "one stack, one line: \(text)")
    }
}

@Suite struct SpeedscopeTests {
    @Test func oneSampledProfilePerFingerprintOnSharedFrames() throws {
        let data = Data(SpeedscopeExporter().export(sampleCollection()))
        let file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(file["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
        let frames = try #require((file["shared"] as? [String: Any])?["frames"] as? [[String: Any]])
        let names = frames.compactMap { $0["name"] as? String }
        #expect(Set(names) == ["A.slow()", "B.wait()", "CFRunLoopRunSpecific", "main", "__libc_start_main"])
        let profiles = try #require(file["profiles"] as? [[String: Any]])
        #expect(profiles.count == 2)
        let first = profiles[0]
        #expect(first["type"] as? String == "sampled")
        #expect(first["unit"] as? String == "milliseconds")
        #expect((first["name"] as? String)?.hasPrefix("A.slow() [aaaaaaaaaaaaaaaa]") == true)
        let samples = try #require(first["samples"] as? [[Int]])
        let weights = try #require(first["weights"] as? [Double])
        #expect(samples.count == 6 && weights.count == 6)
        #expect(weights.reduce(0, +) == 1200)
        #expect(first["endValue"] as? Double == 1200)
        // Root first: the outermost frame starts each stack, the culprit ends it.
        #expect(samples.allSatisfy { names[$0.first!] == "__libc_start_main" && names[$0.last!] == "A.slow()" })
    }
}

@Suite struct ChromeTraceTests {
    @Test func stallsAreCompleteEventsOnNamedThreadTracks() throws {
        let data = Data(ChromeTraceExporter().export(sampleCollection()))
        let file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let events = try #require(file["traceEvents"] as? [[String: Any]])
        let complete = events.filter { $0["ph"] as? String == "X" }
        #expect(complete.count == 3)
        #expect(complete.map { $0["dur"] as? Double } == [600_000, 600_000, 300_000])
        #expect(complete.map { $0["ts"] as? Double } == [0, 1_713_000, 713_000])
        #expect(complete.map { $0["pid"] as? Int } == [1, 1, 2])
        #expect(complete.map { $0["tid"] as? Int } == [1, 1, 2])
        #expect((complete[0]["name"] as? String) == "stall: A.slow()")
        let threadNames = events.filter { $0["ph"] as? String == "M" && $0["name"] as? String == "thread_name" }
        #expect(threadNames.count == 2)
        #expect(((threadNames[0]["args"] as? [String: Any])?["name"] as? String) == "main thread (tid 100)")
        let instants = events.filter { $0["ph"] as? String == "i" }
        #expect(instants.count == 9)
        #expect(instants.allSatisfy { $0["s"] as? String == "t" })
        #expect(instants.first?["ts"] as? Double == 240_000)
    }
}

@Suite struct PprofTests {
    @Test func samplesAreWeightedByStalledTimeAndLabelled() throws {
        let collection = sampleCollection()
        let profile = try ProtoMessage(PprofExporter().profile(collection))
        let strings = profile.blobs(6).map { String(decoding: $0, as: UTF8.self) }
        #expect(strings.first == "")
        let samples = try profile.blobs(2).map(ProtoMessage.init)
        #expect(samples.count == 9)
        let values = try samples.map { try $0.packed(2) }
        #expect(values.allSatisfy { $0.count == 2 && $0[0] == 1 })
        #expect(values.map { $0[1] }.reduce(0, +) == 1_500_000_000)
        // Labels: fingerprint, stall, thread, callout.
        let labels = try samples[0].blobs(3).map(ProtoMessage.init)
        let keys = labels.map { strings[Int($0.varints(1)[0])] }
        #expect(keys == ["fingerprint", "stall", "thread", "callout"])
        #expect(strings[Int(labels[0].varints(2)[0])] == "aaaaaaaaaaaaaaaa")
        #expect(strings[Int(labels[3].varints(2)[0])] == "timer")
        // The leaf location of every sample of the first stall is A.slow(), at main.swift:42.
        let functions = try profile.blobs(5).map(ProtoMessage.init)
        let locations = try profile.blobs(4).map(ProtoMessage.init)
        let leaf = try #require(try samples[0].packed(1).first)
        let location = try #require(locations.first { $0.varints(1) == [leaf] })
        let line = try ProtoMessage(try #require(location.blobs(4).first))
        #expect(line.varints(2) == [42])
        let function = try #require(functions.first { $0.varints(1) == line.varints(1) })
        #expect(strings[Int(function.varints(2)[0])] == "A.slow()")
        #expect(strings[Int(function.varints(4)[0])] == "main.swift")
        // Mappings: the program's image comes first, so pprof names the profile after it.
        let mappings = try profile.blobs(3).map(ProtoMessage.init)
        #expect(strings[Int(mappings[0].varints(5)[0])] == "/srv/app")
        #expect(mappings.count == 3)
    }

    @Test func theThreadLabelIsTheThreadsNameWhereTheRecordHasOne() throws {
        let records = [
            RecordFixtures.stall(id: 1, extra: #","threadName":"io-worker""#),
            RecordFixtures.stall(id: 2, startedAt: "2026-11-29T20:33:12.000Z"),
        ].joined(separator: "\n")
        var merger = StallMerger()
        NDJSONInput.read(bytes: Array(records.utf8), named: "threads.ndjson", into: &merger)
        let profile = try ProtoMessage(PprofExporter().profile(merger.finish()))
        let strings = profile.blobs(6).map { String(decoding: $0, as: UTF8.self) }
        let threadKey = try #require(strings.firstIndex(of: "thread"))
        let threads = try profile.blobs(2).map(ProtoMessage.init).map { sample in
            let labels = try sample.blobs(3).map(ProtoMessage.init)
            let label = try #require(labels.first { $0.varints(1) == [UInt64(threadKey)] })
            return strings[Int(label.varints(2)[0])]
        }
        #expect(Set(threads) == ["io-worker", "app tid 100"], "\(threads)")
        #expect(threads.prefix(3).allSatisfy { $0 == "io-worker" }, "the named thread's samples carry its name")
    }

    @Test func controlCharactersInItsStringsAreWrittenAsVisibleEscapes() throws {
        let profile = try ProtoMessage(PprofExporter().profile(untrustedNamesCollection()))
        let strings = profile.blobs(6).map { String(decoding: $0, as: UTF8.self) }
        #expect(!strings.joined().unicodeScalars.contains(where: isUnsafe), "\(strings)")
        #expect(strings.contains(#"evil\x1b]0;t\x07\x7f\x9b\u{202e}\u{2066}\u{200f}\u{61c}()"#), "\(strings)")
        #expect(strings.contains(#"io\x1b[2Jworker"#), "the thread label too: \(strings)")
    }

    @Test func theFileIsGzip() {
        let bytes = PprofExporter().export(sampleCollection())
        #expect(Array(bytes.prefix(3)) == [0x1f, 0x8b, 8])
    }
}

@Suite struct TextSummaryTests {
    @Test func groupsAreListedMostStalledTimeFirst() {
        let text = String(decoding: TextSummaryExporter().export(sampleCollection()), as: UTF8.self)
        #expect(text.hasPrefix("3 stalls (1.5 s stalled) in 2 runs on 2 hosts, 2 fingerprints, from 2 inputs\n"))
        #expect(text.contains("1. A.slow()  [aaaaaaaaaaaaaaaa]\n   main.swift:42, timer callout, app\n"), "\(text)")
        #expect(text.contains("2 stalls: total 1.2 s, p50 600 ms, p95 600 ms, max 600 ms"), "\(text)")
        #expect(text.contains("in 1 run on 1 host (alpha); first 2026-11-29T20:33:10.287Z,"), "\(text)")
        #expect(text.contains("2. B.wait()  [bbbbbbbbbbbbbbbb]"), "\(text)")
    }

    @Test func namesFromTheRecordsCannotForgeLinesOrEscapes() {
        var merger = StallMerger()
        let record = StallwatchTestSupportRecord.withCulprit(#"evil\n2. fake\u001b[31m"#)
        NDJSONInput.read(bytes: Array(record.utf8), named: "evil", into: &merger)
        let text = String(decoding: TextSummaryExporter().export(merger.finish()), as: UTF8.self)
        #expect(!text.contains("\u{1B}") && !text.contains("\n2. fake"), "\(text)")
        #expect(text.contains(#"evil\n2. fake\x1b[31m"#), "\(text)")
    }
}

@Suite struct HTMLPageTests {
    @Test func thePageIsSelfContainedWithItsDataEmbedded() throws {
        let page = String(decoding: HTMLExporter().export(sampleCollection()), as: UTF8.self)
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(!page.contains("http://") && !page.contains("src=") && !page.contains("<link"))
        let start = try #require(page.range(of: #"<script type="application/json" id="stallwatch-data">"#))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let json = Data(page[start.upperBound..<end.lowerBound].utf8)
        let data = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect((data["stalls"] as? [Any])?.count == 3)
        #expect((data["groups"] as? [Any])?.count == 2)
    }

    @Test func aSymbolCannotCloseTheDataScript() throws {
        var merger = StallMerger()
        let record = StallwatchTestSupportRecord.withCulprit("evil</script><script>alert(1)</script>")
        NDJSONInput.read(bytes: Array(record.utf8), named: "evil", into: &merger)
        let page = String(decoding: HTMLExporter().export(merger.finish()), as: UTF8.self)
        #expect(!page.contains("evil</script>"))
        #expect(page.contains(#"evil\u003c/script>"#))
        #expect(page.components(separatedBy: "</script>").count == 3)
    }
}

/// A stall whose culprit and thread are named with ESC, BEL, DEL, a C1 control (CSI) and bidi controls.
func untrustedNamesCollection() -> StallCollection {
    let culprit = #"evil\u001b]0;t\u0007\u007f\u009b\u202e\u2066\u200f\u061c()"#
    let record = RecordFixtures.stall(
        culprit: culprit, samples: [(240, [RecordFixtures.frame(culprit)])],
        extra: #","threadName":"io\u001b[2Jworker""#)
    var merger = StallMerger()
    NDJSONInput.read(bytes: Array(record.utf8), named: "evil.ndjson", into: &merger)
    return merger.finish()
}

/// What no text output may carry raw: C0 but the newlines between lines, DEL, C1, and the bidi controls.
func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A: false
    case 0..<0x20, 0x7F..<0xA0, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x061C: true
    default: false
    }
}
