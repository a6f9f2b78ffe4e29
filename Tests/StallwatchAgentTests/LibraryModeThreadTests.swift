// Library mode with `threads`: a run-loop thread of this test process, named only after its loop started, is found,
// watched by the one watcher, and its stall handed to the app's handler with the thread's name.
import CStallwatchAgentSupport
import CStallwatchSystem
import Foundation
import StallwatchAgent
import StallwatchCore
import Synchronization
import Testing

private let reports = Mutex<[StallReport]>([])

// Part of the hook's suite, serialized with it: both set the process's one pair of loop-thread hooks.
extension LoopThreadHookTests {
    @inline(never)
    static func burnOnTheLoopThread(for duration: Duration) -> UInt64 {
        let deadline = ContinuousClock.now + duration
        var value: UInt64 = 1
        while ContinuousClock.now < deadline { value = value &* 6_364_136_223_846_793_005 &+ 1 }
        return value
    }

    @Test func aLateNamedLoopThreadIsWatchedAndNamed() throws {
        let monitor = try StallMonitor.start(
            .init(threshold: .milliseconds(50), count: 3, maxSamples: 4, threads: [.name("late-named-*")])
        ) { report in reports.withLock { $0.append(report) } }
        defer { monitor.stop() }
        let done = DispatchSemaphore(value: 0)
        let loopTid = Atomic<Int32>(0)
        let thread = Thread {
            unblockCaptureSignal()
            loopTid.store(sw_agent_gettid(), ordering: .relaxed)
            let loop = RunLoop.current
            // Named from a callout once the loop runs, as a thread named late is: a candidate until then.
            loop.add(
                Timer(fire: Date().addingTimeInterval(0.05), interval: 0, repeats: false) { _ in
                    _ = sw_set_thread_name("late-named-loop")
                }, forMode: .default)
            loop.add(
                Timer(fire: Date().addingTimeInterval(0.8), interval: 0, repeats: false) { _ in
                    _ = Self.burnOnTheLoopThread(for: .milliseconds(500))
                }, forMode: .default)
            loop.run(until: Date().addingTimeInterval(1.8))
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 20) == .success)
        // The stall ends at the loop's next transition; the watcher hands it over on its next wake.
        let deadline = Date().addingTimeInterval(5)
        while reports.withLock({ $0.isEmpty }), Date() < deadline { usleep(20_000) }
        let found = reports.withLock { $0 }
        #expect(found.count == 1, "one stall, on the loop thread: \(found.map(\.tid))")
        let stall = try #require(found.first)
        #expect(stall.tid == loopTid.load(ordering: .relaxed))
        #expect(stall.threadName == "late-named-loop")
        #expect(stall.phase == .afterWaiting, "seen by the observers added to the running loop")
        let duration = try #require(stall.duration)
        // Generous: a shared machine; the agent's end is the loop's first transition after the callout.
        #expect(duration >= 450_000_000 && duration <= 800_000_000, "\(duration / 1_000_000) ms")
        #expect(!stall.samples.isEmpty, "captured in-process: \(stall.captureNote ?? "")")
    }
}
