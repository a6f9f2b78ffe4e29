// A fixed amount of CPU work for the realistic workload's callbacks, which the optimizer cannot remove.
import Synchronization

enum WorkUnit {
    /// Runs `rounds` of xorshift: a fixed count, not a time budget, so a slower loop gets less done.
    @inline(never)
    static func perform(rounds: Int) -> UInt64 {
        var word: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<rounds {
            word ^= word << 13
            word ^= word >> 7
            word ^= word << 17
        }
        return word
    }
}

/// Where finished work goes, so the arithmetic that produced it must be kept.
enum WorkSink {
    private static let latest = Atomic<UInt64>(0)

    static func keep(_ value: UInt64) { latest.store(value, ordering: .relaxed) }
}
