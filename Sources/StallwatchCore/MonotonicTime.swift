// The one time base of the collector, the CLI and their helpers: CLOCK_MONOTONIC nanoseconds.
import Glibc

/// `CLOCK_MONOTONIC` now, in nanoseconds: the time base shared with the agent.
public func monotonicNow() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

extension Duration {
    /// Whole nanoseconds (negative durations as 0).
    public var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
