// The agent's stand-ins (CStallwatchAgentSupport's cf_run_loop.c and dispatch.c) are the definitions callers reach in
// this test process, whose executable exports them ahead of CoreFoundation and libdispatch, and each hands on to the
// library's own.
import CStallwatchAgentSupport
import CoreFoundation
import Foundation
import Testing

@Suite struct StandInTests {
    /// What makes the main loop's runs publish their entry and exit from the stand-in instead of observers.
    @Test func theRunLoopStandInIsTheOneCallersReach() {
        #expect(sw_agent_runs_pass_through_agent() == 1)
    }

    /// A run of a mode with nothing in it, on a thread of its own, reaches CoreFoundation's own and comes back
    /// finished.
    @Test func aRunIsHandedOnToCoreFoundation() {
        let result = PthreadBox<CFRunLoopRunResult?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            result.value = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.01, false)
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(result.value == .finished)
    }

    /// Swift concurrency's jobs reach libdispatch through the stand-ins (dispatch_async_f for a job due now,
    /// dispatch_after_f for one after a sleep), and run.
    @Test func jobsAreHandedOnToLibdispatch() async throws {
        let value = try await Task.detached { () async throws -> Int in
            try await Task.sleep(for: .milliseconds(5))
            return 42
        }.value
        #expect(value == 42)
    }
}

/// A value one thread writes before a semaphore and another reads after it.
private final class PthreadBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
