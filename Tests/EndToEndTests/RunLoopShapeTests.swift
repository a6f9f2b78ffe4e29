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
