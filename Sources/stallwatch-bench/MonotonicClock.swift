// CLOCK_MONOTONIC in nanoseconds: the clock the demo's ground truth and stallwatch's reports share.
import Glibc

/// Reads `CLOCK_MONOTONIC` directly, so times taken here compare with the demo's `start_ns`, stallwatch's
/// `startMonotonicMs` and the gap target's own timestamps without conversion.
enum MonotonicClock {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Sleeps until `instant`, however many signals interrupt the sleep.
    static func sleep(until instant: UInt64) {
        var target = timespec(tv_sec: Int(instant / 1_000_000_000), tv_nsec: Int(instant % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }

    static func sleep(seconds: Double) {
        sleep(until: now() + UInt64(seconds * 1e9))
    }
}
