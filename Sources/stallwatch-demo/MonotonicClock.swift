// CLOCK_MONOTONIC time for the demo's schedule and ground truth, the clock stallwatch's timestamps are compared with.
import Foundation

/// A point on `CLOCK_MONOTONIC`, in nanoseconds since boot (excluding suspend).
///
/// The demo reads this clock directly rather than through `ContinuousClock` or `Date`, so the `start_ns` it
/// prints is the exact value any other process reading `CLOCK_MONOTONIC` would see.
struct MonotonicInstant: Comparable, Sendable {
    let nanoseconds: Int64

    static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    /// Whether the clock has reached this instant; the busy loops ask this every few thousand iterations.
    var hasPassed: Bool { MonotonicInstant.now() >= self }

    /// This instant as a wall-clock `Date`, which is what `Timer` takes; converted as late as possible
    /// so the two clocks cannot drift apart in between.
    var date: Date { Date(timeIntervalSinceNow: (self - .now()).seconds) }

    /// Blocks the calling thread until this instant, however many signals interrupt the sleep.
    func sleepUntil() {
        var target = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }

    static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    static func + (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: lhs.nanoseconds + rhs.nanoseconds)
    }

    static func - (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: lhs.nanoseconds - rhs.nanoseconds)
    }

    static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Duration {
        .nanoseconds(lhs.nanoseconds - rhs.nanoseconds)
    }
}

extension Duration {
    /// Whole nanoseconds; the demo never deals in anything finer.
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }

    var seconds: Double { Double(nanoseconds) / 1e9 }

    var milliseconds: Double { Double(nanoseconds) / 1e6 }
}
