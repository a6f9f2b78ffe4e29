// Main threads that run their loop in other shapes than one `run(until:)`: a nested loop that returns into its
// callout, a loop pumped by hand, a private mode. The demo's own clock is the ground truth.
import Foundation
import StallwatchTestSupport
import Testing

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct RunLoopShapeTests {
    /// The report's start and length against the demo's: the report measures from the last transition before the
    /// stall to the first after it, the demo inside its code, so the report starts no later and lasts no less.
    private func expectTimed(_ stall: StallRecord, like truth: DemoStall) throws {
        let duration = try #require(stall.durationMs.value)
        #expect(
            duration >= truth.durationMs - 5 && duration <= truth.durationMs + 30,
            "reported \(duration) ms, demo measured \(truth.durationMs) ms")
        let truthStart = Double(truth.startNanoseconds) / 1_000_000
        #expect(
            stall.startMonotonicMs <= truthStart + 1 && stall.startMonotonicMs >= truthStart - 30,
            "reported start \(stall.startMonotonicMs) ms, demo's \(truthStart) ms")
    }

    /// A loop that never sleeps: a version-0 source that signals itself again from its callout, run by one
    /// `CFRunLoopRun`, so the loop passes no transition the agent observes (no waking, sleeping, entry or exit) from
    /// start to end; two of its firings burn CPU for 500 ms.
    static let neverSleepingProgram = """
        import CoreFoundation
        import Foundation

        func now() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
        @inline(never) func compactBacklog(until deadline: UInt64) -> UInt64 {
            var value: UInt64 = 1
            while now() < deadline { for index in 0..<UInt64(10_000) { value = value &* 31 &+ index } }
            return value
        }
        final class Loop {
            let origin = now()
            var source: CFRunLoopSource?
            var stalls = 0
            var firings = 0
        }
        let loop = Loop()
        var context = CFRunLoopSourceContext()
        context.info = Unmanaged.passUnretained(loop).toOpaque()
        context.perform = { info in
            let loop = Unmanaged<Loop>.fromOpaque(info!).takeUnretainedValue()
            loop.firings += 1
            let elapsed = now() - loop.origin
            if loop.stalls < 2, elapsed >= 400_000_000 + UInt64(loop.stalls) * 1_000_000_000 {
                loop.stalls += 1
                let start = now()
                let value = compactBacklog(until: start + 500_000_000)
                let milliseconds = Double(now() - start) / 1e6
                FileHandle.standardError.write(Data(
                    ("stallwatch-demo: stall scenario=never-sleeping index=\\(loop.stalls) start_ns=\\(start)"
                        + " duration_ms=\\(milliseconds) culprit=compactBacklog \\(value % 2)\\n").utf8))
            }
            if elapsed >= 2_400_000_000 {
                CFRunLoopStop(CFRunLoopGetCurrent())
            } else {
                CFRunLoopSourceSignal(loop.source)
            }
        }
        loop.source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        CFRunLoopAddSource(CFRunLoopGetCurrent(), loop.source, kCFRunLoopCommonModes)
        CFRunLoopSourceSignal(loop.source)
        CFRunLoopRun()
        print("firings: \\(loop.firings)")
        """

    /// The agent does not observe `beforeSources` on the main loop: a loop that keeps running callouts without
    /// sleeping is seen moving only through the watcher's progress probes. It must still never be reported while
    /// responsive, and a stall in it must be found with its start and length.
    @Test func aLoopThatNeverSleepsIsReportedOnlyForItsStalls() throws {
        let program = try compileSwift(Self.neverSleepingProgram, name: "never-sleeping", extraArguments: ["-O"])
        let result = try runStallwatch(["run", "--format", "json", "--", program])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        #expect(truth.count == 2, "\(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 2, "the two stalls only, nothing for the loop spinning between them: \(result.stdout)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.culprit?.symbol?.contains("compactBacklog") == true, "\(stall.culprit?.symbol ?? "none")")
            #expect(stall.callout == "source0")
            #expect(stall.activity == "beforeSources", "the last progress seen was a probe's answer")
            try expectTimed(stall, like: actual)
        }
    }

    @Test func workAfterANestedLoopReturnsIsAStallOfItsCallout() throws {
        let result = try runStallwatch([
            "demo", "--scenario", "nested-then-stall", "--format", "json", "--", "--stalls", "2", "--duration",
            "500ms",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        #expect(truth.count == 2, "\(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 2, "one stall per callout, none for its responsive nested loop: \(result.stdout)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.culprit?.symbol?.contains("AutosaveCoordinator.writeSnapshot") == true)
            #expect(stall.activity == "afterWaiting", "back in the outer loop's timer callout")
            #expect(stall.callout == "timer")
            #expect(stall.runLoopMode == .value("kCFRunLoopDefaultMode"))
            try expectTimed(stall, like: actual)
        }
    }

    @Test func workBetweenCallsOfAPumpedLoopIsAStallAndShutdownIsNot() throws {
        let result = try runStallwatch([
            "demo", "--scenario", "pump-loop", "--format", "json", "--", "--stalls", "2", "--duration", "500ms",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        #expect(truth.count == 2, "\(result.stderr)")
        let stalls = try result.stalls
        // The demo spends 400 ms shutting down after its last call to the loop: leaving for good is no stall.
        #expect(stalls.count == 2, "\(result.stdout)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.activity == "outsideLoop")
            #expect(stall.runLoopMode == .null)
            #expect(stall.unfinished == false)
            #expect(stall.culprit?.symbol?.contains("FeedRefresher.rebuildFeed") == true)
            try expectTimed(stall, like: actual)
        }
        #expect(try result.summary?.stalls == 2)
        #expect(try result.summary?.unfinished == 0)
    }

    @Test func aStallInAModalSessionNamesItsPrivateMode() throws {
        let result = try runStallwatch([
            "demo", "--scenario", "modal-stall", "--format", "json", "--", "--stalls", "1", "--duration", "400ms",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)")
        #expect(stall.runLoopMode == .value("com.stallwatch.demo.modal"))
        let text = try runStallwatch(["demo", "--scenario", "cpu", "--", "--stalls", "1", "--duration", "400ms"])
        #expect(text.stdout.contains("run-loop mode kCFRunLoopDefaultMode"), "\(text.stdout)")
    }
}
