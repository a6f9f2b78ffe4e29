// Every demo scenario under the real CLI: the culprit is named, the baseline is quiet, sleeps keep their length.
import Foundation
import StallwatchTestSupport
import Testing

/// The stalling scenarios, the function each report must name, the callout it runs in, and what the
/// main thread is doing (`cpuBound`, or what it is blocked on).
let stallingScenarios: [(scenario: String, culprit: String, callout: String, doing: String)] = [
    ("cpu", "ChecksumEngine.crunchChecksums", "timer", "cpuBound"),
    ("sleep", "DiskCache.waitForSlowDisk", "timer", "sleep"),
    ("main-queue", "ThumbnailDecoder.decodeAllThumbnails", "mainQueue", "cpuBound"),
    ("source", "MessagePump.drainInbox", "source0", "cpuBound"),
    ("mutex", "AccountStore.waitForAccountLock", "timer", "lock"),
    ("vdso", "FrameClock.spinUntilNextFrame", "timer", "cpuBound"),
    ("observer", "LayoutObserver.recomputeLayoutBeforeSleep", "observer", "cpuBound"),
    ("two-phase", "ImportPipeline.parseRecords", "timer", "cpuBound"),
    ("modal-stall", "ModalSession.validateFormFields", "timer", "cpuBound"),
]

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct DemoScenarioTests {
    @Test(arguments: stallingScenarios.map(\.scenario))
    func scenarioIsReportedWithItsCulprit(scenario: String) throws {
        let expected = try #require(stallingScenarios.first { $0.scenario == scenario })
        let culprit = expected.culprit
        // two-phase needs room for its phases: 750 ms of A then 150 ms of B is sampled as A even on a busy
        // machine whose samples come late.
        let duration = scenario == "two-phase" ? "900ms" : "500ms"
        let result = try runStallwatch([
            "demo", "--scenario", scenario, "--format", "json", "--", "--stalls", "2", "--duration", duration,
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        #expect(truth.count == 2, "the demo reports its own stalls: \(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 2, "one report per stall: \(result.stdout)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.symbols.contains { $0.contains(culprit) }, "culprit \(culprit) in \(stall.symbols)")
            let culpritSymbol = stall.culprit?.symbol
            #expect(culpritSymbol?.contains(culprit) == true, "the report's culprit is \(culpritSymbol ?? "none")")
            #expect(stall.capture.method == "ptrace")
            #expect(stall.callout == expected.callout)
            let thread = stall.thread.value
            let doing = thread?.verdict == "cpuBound" ? "cpuBound" : thread?.blockedOn
            #expect(doing == expected.doing, "thread: \(thread.map { "\($0)" } ?? "none")")
            let samples = stall.samples
            #expect(samples.count >= 3, "a 500 ms stall is sampled at 240, 320, 400 ms and after")
            // Stack complete down to the process entry point.
            #expect(stall.symbols.contains { $0 == "_start" || $0.hasPrefix("__libc_start") })
            // The agent's stand-ins between the program's main and its run loop are not shown.
            let agentFrames = samples.flatMap(\.frames).filter { $0.image?.contains("libStallwatchAgent") == true }
            #expect(agentFrames.isEmpty, "agent frames shown: \(agentFrames.compactMap(\.symbol))")
            let duration = try #require(stall.durationMs.value)
            // The report measures from the last run-loop transition before the stall to the first after it;
            // the demo measures inside its callout, so the report is never shorter and only slightly longer.
            #expect(
                duration >= actual.durationMs - 5 && duration <= actual.durationMs + 30,
                "reported \(duration) ms, demo measured \(actual.durationMs) ms")
        }
        let summary = try #require(try result.summary)
        #expect(summary.stalls == 2)
        #expect(summary.exitStatus == .value(0))
    }

    @Test func repeatsShareAFingerprintAndTheSummaryNamesTheCulprit() throws {
        let result = try runStallwatch(["demo", "--scenario", "mutex", "--format", "json", "--", "--stalls", "3"])
        let stalls = try result.stalls
        let fingerprints = Set(stalls.map(\.fingerprint))
        #expect(stalls.count == 3)
        #expect(fingerprints.count == 1, "the same stall three times: \(fingerprints)")
        let summary = try #require(try result.summary)
        let top = summary.topCulprits.first
        #expect(top?.symbol.contains("AccountStore.waitForAccountLock") == true)
        #expect(top?.stalls == 3)
        #expect(summary.p95StallMs >= 599)
        // NSLock is a glibc mutex: its holder, the background sync asleep with the lock, is named with its stack.
        for stall in stalls {
            let holder = stall.blocker.value?.holder.value
            #expect(holder?.threadName == "accounts-sync", "\(stall.blocker)")
            #expect(holder?.symbols.contains { $0.contains("AccountStore.syncInBackground") } == true)
            #expect(holder?.doing.value?.contains("nanosleep") == true)
        }
    }

    @Test func stoppedProcessIsFlaggedNotBlamed() throws {
        // The process is stopped (SIGSTOP) before its stall is due; the watcher, stopped too, wakes late.
        let script =
            "\(Products.demo) --scenario cpu --stalls 1 --duration 4s --period 5s & demo=$!;"
            + " sleep 0.9; kill -STOP $demo; sleep 2; kill -CONT $demo; wait $demo"
        let result = try runStallwatch([
            "run", "--threshold", "500ms", "--format", "json", "--", "/bin/sh", "-c", script,
        ])
        let stall = try #require(try result.stalls.first, "\(result.stdout)\n\(result.stderr)")
        let confidence = stall.confidence
        #expect(confidence.level == "low")
        #expect(confidence.watcherLateMs > 500)
        #expect(confidence.note?.contains("stopped") == true)
    }

    @Test func theDemoRunsWithItsStandardErrorClosed() throws {
        // `2>&-`: its ground-truth lines have nowhere to go, which must not stop its stalls.
        let result = try runStallwatch([
            "run", "--format", "json", "--", "/bin/sh", "-c",
            "exec \(Products.demo) --stalls 1 --duration 300ms --period 800ms 2>&-",
        ])
        #expect(result.status == 0, "the demo exited 0 (132 was SIGILL): \(result.stderr)")
        #expect(try result.stalls.count == 1, "and stalled as asked: \(result.stdout)")
    }

    @Test func responsiveModalSessionInAPrivateModeIsNotAStall() throws {
        let result = try runStallwatch([
            "demo", "--scenario", "modal", "--format", "json", "--", "--duration", "1s", "--period", "2s",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let sessions = result.stderr.split(separator: "\n").filter { $0.hasPrefix("stallwatch-demo: modal ") }
        #expect(sessions.count == 2, "the demo ran its modal sessions: \(result.stderr)")
        #expect(try result.stalls.isEmpty, "a nested loop that stays responsive is not a stall: \(result.stdout)")
    }

    @Test func dispatchMainProgramIsWatchedWithNoFlags() throws {
        // No run loop at all: the agent falls back to pinging the main queue, served by a worker thread.
        let result = try runStallwatch([
            "demo", "--scenario", "dispatch-main", "--format", "json", "--", "--stalls", "2", "--duration", "600ms",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 2, "\(result.stdout)")
        for (stall, actual) in zip(stalls, result.groundTruth) {
            #expect(stall.activity == "mainQueue")
            #expect(stall.callout == "mainQueue")
            #expect(stall.culprit?.symbol?.contains("SyncEngine.mergeChanges") == true)
            #expect(stall.symbols.contains { $0.contains("_dispatch_") }, "the worker thread serving the main queue")
            // A ping is posted up to one threshold after the block began: the length may be short by that much.
            let duration = try #require(stall.durationMs.value)
            #expect(
                duration >= actual.durationMs - 90 && duration <= actual.durationMs + 30,
                "\(duration) vs \(actual.durationMs)")
        }
        #expect(try result.summary?.watchedPids.count == 1)
        let warnings = try result.summary?.warnings ?? []
        #expect(!warnings.contains { $0.contains("never ran") })
    }

    @Test func baselineReportsNothing() throws {
        let result = try runStallwatch(["demo", "--scenario", "baseline", "--format", "json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(try result.stalls.isEmpty, "no stall in the baseline: \(result.stdout)")
        let summary = try #require(try result.summary)
        #expect(summary.stalls == 0)
        #expect(summary.watchedPids.count == 1, "the baseline's run loop was watched")
    }

    @Test func sleepStallKeepsItsLength() throws {
        let result = try runStallwatch([
            "demo", "--scenario", "sleep", "--format", "json", "--", "--stalls", "1", "--duration", "600ms",
        ])
        let truth = try #require(result.groundTruth.first)
        // ptrace capture must not interrupt usleep: a signal-based capture cut it to ~240 ms.
        #expect(truth.durationMs >= 599, "the workload's own 600 ms sleep lasted \(truth.durationMs) ms")
        let stall = try #require(try result.stalls.first)
        #expect((stall.durationMs.value ?? 0) >= 599)
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
