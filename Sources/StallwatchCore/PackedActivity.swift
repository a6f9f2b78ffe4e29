// The run-loop state packed into one 64-bit word, so the main thread publishes it with a single store.

/// Packs an ``ActivitySnapshot`` into one atomic word and unpacks it on the watcher's side.
///
/// Layout, high to low: 40 bits of timestamp in microseconds (wraps every 12.7 days), 20 bits of
/// sequence, 4 bits of phase. One plain store keeps the three consistent with no lock and no fence; the
/// watcher detects progress by comparing whole words, so a wrapped sequence alone never hides a change.
public enum PackedActivity {
    static let phaseBits: UInt64 = 4
    static let sequenceBits: UInt64 = 20
    static let timestampBits: UInt64 = 40
    static let timestampMask: UInt64 = (1 << timestampBits) - 1
    static let sequenceMask: UInt64 = (1 << sequenceBits) - 1

    /// - Parameters:
    ///   - sequence: the publisher's running count of transitions (only its low bits are kept).
    ///   - phase: the transition.
    ///   - timestamp: `CLOCK_MONOTONIC` nanoseconds.
    @inline(__always)
    public static func pack(sequence: UInt64, phase: LoopPhase, timestamp: UInt64) -> UInt64 {
        let micros = (timestamp / 1000) & timestampMask
        return micros << (sequenceBits + phaseBits) | (sequence & sequenceMask) << phaseBits | UInt64(phase.rawValue)
    }

    /// Unpacks a word read at `now`: the full timestamp is the time nearest `now` whose low 40 bits of
    /// microseconds match the packed ones. Usually a little before `now`; a little after it when the main thread
    /// published between the watcher's clock read and its load of the word (its precise clock then ran ahead).
    public static func unpack(_ word: UInt64, now: UInt64) -> ActivitySnapshot {
        guard word != 0 else { return .initial }
        let phase = LoopPhase(rawValue: UInt8(word & ((1 << phaseBits) - 1))) ?? .notStarted
        let packedMicros = word >> (sequenceBits + phaseBits)
        let nowMicros = now / 1000
        let age = (nowMicros &- packedMicros) & timestampMask
        let ahead = (packedMicros &- nowMicros) & timestampMask
        // Half the 12.7-day range either way: a stamp ahead of now is at most a scheduling delay ahead.
        let micros: UInt64
        if ahead < age {
            micros = nowMicros &+ ahead
        } else {
            micros = nowMicros >= age ? nowMicros - age : 0
        }
        // The whole word identifies the transition: any new publication changes it.
        return ActivitySnapshot(sequence: word, phase: phase, timestamp: micros * 1000)
    }
}
