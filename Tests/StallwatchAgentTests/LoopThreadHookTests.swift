// The agent's CFRunLoopRunSpecific (CStallwatchAgentSupport's cf_run_loop.c and loop_threads.c): a thread that runs
// its run loop is offered to the hook once, without any code of its own, and the hook hears of its exit.
import CStallwatchAgentSupport
import Foundation
import Synchronization
import Testing

/// The thread the test watches for (others of this process run loops too), and what the hooks saw of it.
private let wantedTid = Atomic<Int32>(0)
private let startedCalls = Atomic<Int>(0)
private let exitedCalls = Atomic<Int>(0)
private let startedTid = Atomic<Int32>(0)
/// What the start hook hands back for the thread, to be given to the exit hook: any non-null address.
nonisolated(unsafe) private let token = UnsafeMutableRawPointer(bitPattern: 0x5157)!

@Suite(.serialized) struct LoopThreadHookTests {
    @Test func aThreadIsOfferedOnceWhenItFirstRunsItsLoopAndForgottenAtItsExit() throws {
        sw_agent_set_loop_thread_hooks(
            { _ in
                guard sw_agent_gettid() == wantedTid.load(ordering: .acquiring) else { return nil }
                startedCalls.add(1, ordering: .relaxed)
                startedTid.store(sw_agent_gettid(), ordering: .relaxed)
                return token
            },
            { watched in
                if watched == token { exitedCalls.add(1, ordering: .relaxed) }
            })
        let done = DispatchSemaphore(value: 0)
        let runTid = Atomic<Int32>(0)
        let thread = Thread {
            wantedTid.store(sw_agent_gettid(), ordering: .releasing)
            runTid.store(sw_agent_gettid(), ordering: .relaxed)
            // Foundation's RunLoop, several runs: each goes through CFRunLoopRunSpecific.
            let timer = Timer(fire: Date().addingTimeInterval(0.01), interval: 0.01, repeats: true) { _ in }
            RunLoop.current.add(timer, forMode: .default)
            for _ in 0..<5 { RunLoop.current.run(mode: .default, before: Date().addingTimeInterval(0.02)) }
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(startedCalls.load(ordering: .relaxed) == 1, "offered once, at its first run")
        #expect(startedTid.load(ordering: .relaxed) == runTid.load(ordering: .relaxed), "on the loop thread itself")
        // The thread-exit destructor runs as the thread finishes, just after the closure returns.
        let deadline = Date().addingTimeInterval(5)
        while exitedCalls.load(ordering: .relaxed) == 0, Date() < deadline { usleep(10_000) }
        #expect(exitedCalls.load(ordering: .relaxed) == 1)
    }
}
