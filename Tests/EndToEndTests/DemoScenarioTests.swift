// Every demo scenario under the real CLI: the culprit is named, the baseline is quiet, sleeps keep their length.
import Foundation
import Testing

/// The stalling scenarios and the function each report must name.
let stallingScenarios: [(scenario: String, culprit: String)] = [
    ("cpu", "ChecksumEngine.crunchChecksums"),
    ("sleep", "DiskCache.waitForSlowDisk"),
    ("main-queue", "ThumbnailDecoder.decodeAllThumbnails"),
    ("source", "MessagePump.drainInbox"),
    ("mutex", "AccountStore.waitForAccountLock"),
    ("vdso", "FrameClock.spinUntilNextFrame"),
    ("observer", "LayoutObserver.recomputeLayoutBeforeSleep"),
]

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct DemoScenarioTests {
    @Test(arguments: stallingScenarios.map(\.scenario))
    func scenarioIsReportedWithItsCulprit(scenario: String) throws {
        let culprit = try #require(stallingScenarios.first { $0.scenario == scenario }?.culprit)
        let result = try runStallwatch([
            "demo", "--scenario", scenario, "--format", "json", "--", "--stalls", "2", "--duration", "500ms",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        #expect(truth.count == 2, "the demo reports its own stalls: \(result.stderr)")
        #expect(result.stalls.count == 2, "one report per stall: \(result.stdout)")
        for (stall, actual) in zip(result.stalls, truth) {
            #expect(symbols(in: stall).contains { $0.contains(culprit) }, "culprit \(culprit) in \(symbols(in: stall))")
            let culpritSymbol = (stall["culprit"] as? [String: Any])?["symbol"] as? String
            #expect(culpritSymbol?.contains(culprit) == true, "the report's culprit is \(culpritSymbol ?? "none")")
            #expect((stall["capture"] as? [String: Any])?["method"] as? String == "ptrace")
            // Stack complete down to the process entry point.
            #expect(symbols(in: stall).contains { $0 == "_start" || $0.hasPrefix("__libc_start") })
            let duration = try #require(stall["durationMs"] as? Double)
            // The report measures from the last run-loop transition before the stall to the first after it;
            // the demo measures inside its callout, so the report is never shorter and only slightly longer.
            #expect(
                duration >= actual.durationMs - 5 && duration <= actual.durationMs + 60,
                "reported \(duration) ms, demo measured \(actual.durationMs) ms")
        }
        let summary = try #require(result.summary)
        #expect(summary["stalls"] as? Int == 2)
        #expect(summary["exitStatus"] as? Int == 0)
    }

    @Test func baselineReportsNothing() throws {
        let result = try runStallwatch(["demo", "--scenario", "baseline", "--format", "json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stalls.isEmpty, "no stall in the baseline: \(result.stdout)")
        let summary = try #require(result.summary)
        #expect(summary["stalls"] as? Int == 0)
        #expect((summary["watchedPids"] as? [Int])?.count == 1, "the baseline's run loop was watched")
    }

    @Test func sleepStallKeepsItsLength() throws {
        let result = try runStallwatch([
            "demo", "--scenario", "sleep", "--format", "json", "--", "--stalls", "1", "--duration", "600ms",
        ])
        let truth = try #require(result.groundTruth.first)
        // ptrace capture must not interrupt usleep: a signal-based capture cut it to ~240 ms.
        #expect(truth.durationMs >= 599, "the workload's own 600 ms sleep lasted \(truth.durationMs) ms")
        let stall = try #require(result.stalls.first)
        #expect((stall["durationMs"] as? Double ?? 0) >= 599)
    }

    @Test func textReportNamesTheCulprit() throws {
        let result = try runStallwatch(["demo", "--scenario", "cpu", "--", "--stalls", "1"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("stallwatch: stall #1 in stallwatch-demo"))
        #expect(
            result.stdout.contains("culprit: static ChecksumEngine.crunchChecksums(until:) at Culprits.swift"),
            "\(result.stdout)")
        #expect(result.stdout.contains("stallwatch: 1 stall"))
    }
}
