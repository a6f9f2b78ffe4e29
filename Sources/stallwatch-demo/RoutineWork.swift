// The baseline scenario's work: short, frequent callouts that keep the run loop busy without ever stalling it.

enum Heartbeat {
    /// Hashes a counter until `deadline`; run from a repeating timer.
    @inline(never)
    static func sendHeartbeat(until deadline: MonotonicInstant) -> UInt64 {
        var beat: UInt64 = 1
        repeat {
            beat = (beat << 5 | beat >> 59) ^ 0xB5
        } while !deadline.hasPassed
        return beat
    }
}

enum StatusBar {
    /// Folds a counter into a polynomial hash until `deadline`; run from blocks posted to the main queue.
    @inline(never)
    static func refreshClock(until deadline: MonotonicInstant) -> UInt64 {
        var text: UInt64 = 17
        repeat {
            text = text &* 31 &+ 0x3A
        } while !deadline.hasPassed
        return text
    }
}
