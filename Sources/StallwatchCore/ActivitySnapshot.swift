// One consistent reading of the run-loop state the agent's observers publish.

/// The latest run-loop transition: which one it was, its sequence number and when it happened.
///
/// The main thread publishes a new snapshot on every observed activity; the watcher reads it. Two readings
/// with the same `sequence` mean the loop made no progress in between.
public struct ActivitySnapshot: Equatable, Sendable {
    /// Identifies the transition: differs between any two consecutive publications.
    public var sequence: UInt64
    public var phase: LoopPhase
    /// When the transition happened, in `CLOCK_MONOTONIC` nanoseconds.
    public var timestamp: UInt64
    /// The run-loop mode the loop was running in (the agent's index for it; 0 for none or unknown).
    public var mode: UInt8

    public init(sequence: UInt64, phase: LoopPhase, timestamp: UInt64, mode: UInt8 = 0) {
        self.sequence = sequence
        self.phase = phase
        self.timestamp = timestamp
        self.mode = mode
    }

    /// Before the loop's first activity.
    public static let initial = ActivitySnapshot(sequence: 0, phase: .notStarted, timestamp: 0)
}
