// The run-loop state packed into one 64-bit word, so the watched thread publishes it with a single store.
import CStallwatchLoopModel

/// Reads the word a watched thread publishes on its activity board.
///
/// Layout, high to low (the C loop model's `sw_packed_activity.h`, which this reads): 56 bits of stamp on the board's
/// clock (the agent's C board packs it, strictly later at each transition of the thread, and turns it back into
/// `CLOCK_MONOTONIC` time: see `sw_board_read`), 4 bits of run-loop mode (an index the agent assigns, 0 for none or
/// unknown), 4 bits of phase. One plain store keeps them consistent with no lock and no fence; the watcher detects
/// progress by comparing whole words, which differ at every transition since their stamps do.
public enum PackedActivity {
    /// Mode indices that fit in the word: 1 to 15 (0 is "none").
    public static var modeLimit: UInt8 { UInt8(SW_PACKED_MODE_LIMIT) }

    /// The low byte of a word: what a board packs below its stamp (for tests of the layout).
    public static func pack(phase: LoopPhase, mode: UInt8 = 0) -> UInt64 {
        UInt64(sw_packed_state(phase.rawValue, mode))
    }

    /// Unpacks a word whose transition happened at `timestamp` (`CLOCK_MONOTONIC` nanoseconds, as the board
    /// decoded its stamp).
    public static func unpack(_ word: UInt64, timestamp: UInt64) -> ActivitySnapshot {
        guard word != 0 else { return .initial }
        let state = sw_packed_word_state(word)
        let phase = LoopPhase(rawValue: sw_packed_state_phase(state)) ?? .notStarted
        let mode = sw_packed_state_mode(state)
        // The whole word identifies the transition: any new publication changes it.
        return ActivitySnapshot(sequence: word, phase: phase, timestamp: timestamp, mode: mode)
    }
}
