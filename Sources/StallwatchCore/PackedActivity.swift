// The run-loop state packed into one 64-bit word, so the main thread publishes it with a single store.

/// Packs an ``ActivitySnapshot`` into one atomic word and unpacks it on the watcher's side.
///
/// Layout, high to low: 40 bits of timestamp in microseconds (wraps every 12.7 days), 16 bits of
/// sequence, 4 bits of run-loop mode (an index the agent assigns, 0 for none or unknown), 4 bits of phase. One plain store keeps the three consistent with no lock and no fence; the
/// watcher detects progress by comparing whole words, so a wrapped sequence alone never hides a change.
public enum PackedActivity {
    static let phaseBits: UInt64 = 4
    static let modeBits: UInt64 = 4
    static let sequenceBits: UInt64 = 16
    /// Mode indices that fit in the word: 1 to 15 (0 is "none").
    public static let modeLimit: UInt8 = 15
    static let timestampBits: UInt64 = 40
    static let timestampMask: UInt64 = (1 << timestampBits) - 1
    static let sequenceMask: UInt64 = (1 << sequenceBits) - 1

    /// - Parameters:
    ///   - sequence: the publisher's running count of transitions (only its low bits are kept).
    ///   - phase: the transition.
    ///   - timestamp: `CLOCK_MONOTONIC` nanoseconds.
    ///   - mode: the run-loop mode's index (0 for none; only the low 4 bits are kept).
    @inline(__always)
    public static func pack(sequence: UInt64, phase: LoopPhase, timestamp: UInt64, mode: UInt8 = 0) -> UInt64 {
        let micros = (timestamp / 1000) & timestampMask
        return micros << (sequenceBits + modeBits + phaseBits) | (sequence & sequenceMask) << (modeBits + phaseBits)
            | UInt64(mode & 0xF) << phaseBits | UInt64(phase.rawValue)
    }

    /// Unpacks a word read at `now`: the full timestamp is the time nearest `now` whose low 40 bits of
    /// microseconds match the packed ones. Usually a little before `now`; a little after it when the main thread
    /// published between the watcher's clock read and its load of the word (its precise clock then ran ahead).
    public static func unpack(_ word: UInt64, now: UInt64) -> ActivitySnapshot {
        guard word != 0 else { return .initial }
        let phase = LoopPhase(rawValue: UInt8(word & ((1 << phaseBits) - 1))) ?? .notStarted
        let mode = UInt8((word >> phaseBits) & ((1 << modeBits) - 1))
        let packedMicros = word >> (sequenceBits + modeBits + phaseBits)
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
        return ActivitySnapshot(sequence: word, phase: phase, timestamp: micros * 1000, mode: mode)
    }
}
