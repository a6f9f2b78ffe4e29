// The tight-loop workload: a version-0 run-loop source that re-signals itself, so the loop never sleeps.
//
// The worst case for a watcher: every iteration is nearly all run-loop bookkeeping, so whatever an observer
// costs shows up at full size. CoreFoundation is used directly, as a user program may.
import CoreFoundation
import Foundation

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

    /// Runs the main run loop for `seconds` (or until the source fired `iterations` times) with the source always
    /// pending, and counts how often it fired.
    static func run(seconds: Double, iterations: UInt64? = nil, driver: Driver) -> WorkloadResult {
        let state = SourceState()
        state.limit = iterations ?? .max
        var context = CFRunLoopSourceContext()
        context.info = Unmanaged.passUnretained(state).toOpaque()
        context.perform = { info in
            let state = Unmanaged<SourceState>.fromOpaque(info!).takeUnretainedValue()
            state.count += 1
            if state.count >= state.limit {
                CFRunLoopStop(CFRunLoopGetMain())
            } else {
                CFRunLoopSourceSignal(state.source)
            }
        }
        let source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        state.source = source
        CFRunLoopAddSource(CFRunLoopGetMain(), source, kCFRunLoopCommonModes)
        CFRunLoopSourceSignal(source)

        let result = WorkloadResult.measure {
            switch (driver, iterations) {
            case (.coreFoundation, nil): CFRunLoopRunInMode(kCFRunLoopDefaultMode, seconds, false)
            case (.coreFoundation, _): CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1e9, false)
            case (.foundation, nil): RunLoop.main.run(until: Date(timeIntervalSinceNow: seconds))
            case (.foundation, _):
                while state.count < state.limit { RunLoop.main.run(mode: .default, before: .distantFuture) }
            }
            return state.count
        }
        CFRunLoopSourceInvalidate(source)
        return result
    }

    /// The source's counter, reached from its C callback through the context's `info` pointer; main thread only.
    private final class SourceState {
        var count: UInt64 = 0
        var limit: UInt64 = .max
        var source: CFRunLoopSource?
    }
}
