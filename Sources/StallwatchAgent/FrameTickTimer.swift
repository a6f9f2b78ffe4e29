// `--fps`: the 60 Hz tick on the main run loop whose lateness measures the frame rate.
import CStallwatchAgentSupport
import CoreFoundation
import StallwatchCore

/// Installs the frame tick: a repeating `CFRunLoopTimer` on the main run loop, in the common modes.
///
/// A run-loop timer, not a GCD timer, on purpose: it fires late exactly when the loop is busy, and that
/// lateness is what the frame rate measures (as an app's display link would be late). Its callback only
/// reads the monotonic clock and appends the time to ``ring``; the watcher thread turns the times into
/// readings. Tolerance 0, so CoreFoundation does not coalesce the ticks and blur the measurement.
enum FrameTickTimer {
    /// The ticks, from the main thread (producer) to the watcher (consumer).
    static let ring = FrameTickRing()

    /// Adds the timer to the main run loop `mainLoop`. Safe to call from any thread.
    static func install(on mainLoop: CFRunLoop, interval: UInt64) -> CFRunLoopTimer? {
        let seconds = Double(interval) / 1e9
        // No main loop to tick on once the main thread has exited, and adding to it would print into stderr.
        guard sw_agent_main_thread_exited() == 0 else { return nil }
        guard
            let timer = CFRunLoopTimerCreate(nil, CFAbsoluteTimeGetCurrent() + seconds, seconds, 0, 0, recordTick, nil)
        else { return nil }
        CFRunLoopTimerSetTolerance(timer, 0)
        CFRunLoopAddTimer(mainLoop, timer, kCFRunLoopCommonModes)
        return timer
    }

    /// Stops the ticks.
    static func remove(_ timer: CFRunLoopTimer) {
        CFRunLoopTimerInvalidate(timer)
    }
}

/// The tick's whole cost on the main thread: one clock read and one slot store.
private func recordTick(_: CFRunLoopTimer?, _: UnsafeMutableRawPointer?) {
    FrameTickTimer.ring.append(sw_agent_now_ns())
}
