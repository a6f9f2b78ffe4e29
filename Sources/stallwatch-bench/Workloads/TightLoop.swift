// The tight-loop workload: a version-0 run-loop source that re-signals itself, so the loop never sleeps.
//
// The worst case for a watcher: every iteration is nearly all run-loop bookkeeping, so whatever an observer
// costs shows up at full size. CoreFoundation is used directly, as a user program may.
import CStallwatchSystem
import CoreFoundation
import Foundation
import Synchronization

enum TightLoop {
    /// How the loop is driven.
    enum Driver {
        /// One `CFRunLoopRunInMode` call for the whole run: iterations pass `beforeTimers` and `beforeSources`
        /// only (the loop polls, so it never reaches `beforeWaiting`).
        case coreFoundation
        /// `RunLoop.run(until:)`, as Foundation programs run their loop: each handled source ends one
        /// `CFRunLoopRunInMode(…, returnAfterSourceHandled: true)` call, so every iteration also passes `entry`
        /// and `exit`, the transitions the agent stamps with the precise clock.
        case foundation
    }

    /// The name of the thread ``runOnThread(seconds:)`` runs its loop on, for `--thread`.
    static let threadName = "bench-loop"

    /// The same loop on a thread of its own (named ``threadName``), while the main thread only waits for it: what
    /// watching a loop other than the main one costs it.
    static func runOnThread(seconds: Double) -> WorkloadResult {
        let result = Mutex<WorkloadResult?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            // The kernel's name (comm), which --thread matches: Foundation's `Thread.name` does not always reach it.
            _ = sw_set_thread_name(threadName)
            let measured = run(seconds: seconds, driver: .coreFoundation)
            result.withLock { $0 = measured }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0 } ?? WorkloadResult(count: 0, elapsedNanoseconds: 1, cpuNanoseconds: 1)
    }

    /// Runs the calling thread's run loop for `seconds` (or until the source fired `iterations` times) with the
    /// source always pending, and counts how often it fired. Times the calling thread's CPU.
    static func run(seconds: Double, iterations: UInt64? = nil, driver: Driver) -> WorkloadResult {
        let state = SourceState()
        state.limit = iterations ?? .max
        var context = CFRunLoopSourceContext()
        context.info = Unmanaged.passUnretained(state).toOpaque()
        context.perform = { info in
            let state = Unmanaged<SourceState>.fromOpaque(info!).takeUnretainedValue()
            state.count += 1
            if state.count >= state.limit {
                CFRunLoopStop(CFRunLoopGetCurrent())
            } else {
                CFRunLoopSourceSignal(state.source)
            }
        }
        let source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        state.source = source
        CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopCommonModes)
        CFRunLoopSourceSignal(source)

        let result = WorkloadResult.measure {
            switch (driver, iterations) {
            case (.coreFoundation, nil): CFRunLoopRunInMode(kCFRunLoopDefaultMode, seconds, false)
            case (.coreFoundation, _): CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1e9, false)
            case (.foundation, nil): RunLoop.current.run(until: Date(timeIntervalSinceNow: seconds))
            case (.foundation, _):
                while state.count < state.limit { RunLoop.current.run(mode: .default, before: .distantFuture) }
            }
            return state.count
        }
        CFRunLoopSourceInvalidate(source)
        return result
    }

    /// The source's counter, reached from its C callback through the context's `info` pointer; the loop's thread
    /// only.
    private final class SourceState {
        var count: UInt64 = 0
        var limit: UInt64 = .max
        var source: CFRunLoopSource?
    }
}
