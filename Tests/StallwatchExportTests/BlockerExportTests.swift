// `stallwatch report`'s text and page say what the stalled threads waited for: stalled time by blocker, deadlocks
// plainly, the holder's stack beside the stall's own.
import Foundation
import StallwatchAggregate
import StallwatchTestSupport
import Testing

@testable import StallwatchExport

/// Two stalls: one of 600 ms on a mutex `db-writer` holds in `Store.flush()`, one of 400 ms in a deadlock, and the
/// deadlock's own record.
func blockedCollection() -> StallCollection {
    let holder =
        #"{"tid":9,"threadName":"db-writer","closesCycle":false,"threadState":null,"doing":"sleeping","frames":["#
        + RecordFixtures.frame("clock_nanosleep", image: "/usr/lib/x86_64-linux-gnu/libc.so.6", address: 0x9100)
        + "," + RecordFixtures.frame("Store.flush()", address: 0x3000) + #"],"stackNote":null,"blocker":null}"#
    let lock =
        #","blocker":{"kind":"lock","summary":"waiting on a mutex (0x10) held by thread db-writer (tid 9), sleeping","lockKind":"mutex","address":"0x10","futexOp":"FUTEX_WAIT_PRIVATE","holder":"#
        + holder + #","note":null,"searchMs":0.5}"#
    let cycle =
        #","blocker":{"kind":"lock","summary":"waiting on a mutex (0x20) held by thread w (tid 8): a deadlock","lockKind":"mutex","address":"0x20","futexOp":"FUTEX_WAIT_PRIVATE","holder":{"tid":8,"threadName":"w","closesCycle":false,"frames":[],"blocker":{"kind":"lock","lockKind":"mutex","holder":{"tid":100,"closesCycle":true,"frames":[]}}},"note":null,"searchMs":0.5}"#
    let lines = [
        RecordFixtures.stall(id: 1, durationMs: 600, culprit: "View.refresh()", schemaVersion: 3, extra: lock),
        #"{"event":"deadlock","schemaVersion":3,"host":"alpha","pid":100,"process":"app","detectedAt":"2026-11-29T20:33:12.000Z","detectedMonotonicMs":5,"stallId":2,"summary":"thread app (tid 100) and thread w (tid 8) wait on each other's locks","threads":[{},{}]}"#,
        RecordFixtures.stall(
            id: 2, fingerprint: "bbbbbbbbbbbbbbbb", durationMs: 400, culprit: "Sync.both()", schemaVersion: 3,
            extra: cycle),
    ]
    var merger = StallMerger()
    NDJSONInput.read(bytes: Array(lines.joined(separator: "\n").utf8), named: "run.ndjson", into: &merger)
    return merger.finish()
}

@Suite struct BlockerExportTests {
    @Test func theTextSummarySaysWhereTheStalledTimeWentAndEachDeadlock() {
        let collection = blockedCollection()
        #expect(collection.sources.allSatisfy { $0.issues.isEmpty }, "\(collection.sources.map(\.issues))")
        let text = String(decoding: TextSummaryExporter().export(collection), as: UTF8.self)
        #expect(
            text.hasPrefix("2 stalls (1.0 s stalled) in 1 run on 1 host, 2 fingerprints, from 1 input; 1 deadlock\n"),
            "\(text)")
        #expect(
            text.contains(
                "\n    60 % (600 ms, 1 stall) waiting on locks held by thread `db-writer` in `Store.flush()`\n"),
            "\(text)")
        #expect(
            text.contains(
                "\n    40 % (400 ms, 1 stall) waiting on a deadlock (threads waiting on each other's locks)\n"),
            "\(text)")
        #expect(
            text.contains(
                "\nDEADLOCK in app (pid 100): thread app (tid 100) and thread w (tid 8) wait on each other's locks\n"),
            "\(text)")
    }

    @Test func thePageCarriesTheBlockerAndTheHoldersStack() throws {
        let page = String(decoding: HTMLExporter().export(blockedCollection()), as: UTF8.self)
        let start = try #require(page.range(of: #"<script type="application/json" id="stallwatch-data">"#))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        let data = try #require(
            try JSONSerialization.jsonObject(with: Data(page[start.upperBound..<end.lowerBound].utf8)) as? [String: Any]
        )
        let stalls = try #require(data["stalls"] as? [[String: Any]])
        let blocker = try #require(stalls[0]["blocker"] as? [String: Any])
        #expect(blocker["h"] as? String == "thread db-writer (tid 9)")
        #expect(blocker["dl"] as? Bool == false)
        let stacks = try #require(data["stacks"] as? [[Int]])
        let frames = try #require(data["frames"] as? [[String: Any]])
        let holderStack = try #require(stacks[try #require(blocker["hs"] as? Int)])
        // Outermost first on the page.
        #expect(holderStack.map { frames[$0]["n"] as? String } == ["Store.flush()", "clock_nanosleep"])
        #expect((stalls[1]["blocker"] as? [String: Any])?["dl"] as? Bool == true)
        #expect((data["deadlocks"] as? [String])?.first?.hasPrefix("app (pid 100): thread app") == true)
        #expect(page.contains("stack of \" + stall.blocker.h"))
    }
}
