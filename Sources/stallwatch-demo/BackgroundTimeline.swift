// A background thread that acts at fixed CLOCK_MONOTONIC instants: the "other thread" in cross-thread scenarios.
import CStallwatchSystem
import Foundation

enum BackgroundTimeline {
    /// Starts a named thread that sleeps until each instant in turn and calls `action` with that instant's
    /// position, counting from 1 like the stall indices.
    ///
    /// Sleeping to absolute instants keeps the background events on the same timetable as the main thread's timers.
    static func start(
        named name: String,
        at instants: [MonotonicInstant],
        _ action: @escaping @Sendable (Int) -> Void
    ) {
        let thread = Thread {
            // Foundation keeps `Thread.name` to itself on Linux: the kernel's name is what reports show (a lock's
            // holder is named by it).
            _ = sw_set_thread_name(name)
            for (offset, instant) in instants.enumerated() {
                instant.sleepUntil()
                action(offset + 1)
            }
        }
        thread.name = name
        thread.start()
    }
}
