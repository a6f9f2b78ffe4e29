// The ping strategy, as pure logic: for programs with no run loop to observe (dispatchMain, the main actor).

/// Decides stalls of the main dispatch queue from pings, as ANREye does, when there is no CFRunLoop.
///
/// The watcher posts a block (a ping) to the main queue and waits; the block records when it ran and on
/// which thread. A ping unanswered for `count` × `threshold` makes a stall, which ends when the ping is
/// answered. Only one ping is outstanding at a time, so an idle program costs one main-queue hop per
/// threshold. The stall's start is the ping's posting: up to one threshold after the block that stalled
/// began, so lengths are accurate to one threshold (the run-loop strategy's are exact).
public struct PingDetector: Sendable {
    /// A ping the main queue ran.
    public struct Answer: Equatable, Sendable {
        public var sequence: UInt64
        /// `CLOCK_MONOTONIC` nanoseconds when the ping's block ran.
        public var time: UInt64
        /// The thread that runs main-queue blocks (not the main thread under `dispatchMain()`).
        public var thread: Int32

        public init(sequence: UInt64, time: UInt64, thread: Int32) {
            self.sequence = sequence
            self.time = time
            self.thread = thread
        }
    }

    public let threshold: UInt64
    public let count: Int
    /// The outstanding ping: its sequence and when it was posted.
    public private(set) var outstanding: (sequence: UInt64, postedAt: UInt64)?
    /// The thread that answered the last ping: the one to sample during a stall.
    public private(set) var servingThread: Int32?
    private var lastSequence: UInt64 = 0
    private var ongoing: StallOnset?
    private let identifiers: StallIdentifiers

    /// - Parameter identifiers: where stall numbers come from, shared with the process's run-loop detectors.
    public init(threshold: UInt64, count: Int, identifiers: StallIdentifiers = StallIdentifiers()) {
        precondition(threshold > 0 && count > 0, "validated by the caller")
        self.threshold = threshold
        self.count = count
        self.identifiers = identifiers
    }

    public var ongoingStall: StallOnset? { ongoing }

    /// Takes the latest answer (if any) at `now`.
    ///
    /// - Returns: the stall events, and the sequence of a new ping to post now, if one is due.
    public mutating func observe(_ answer: Answer?, now: UInt64) -> (events: [StallDetector.Event], post: UInt64?) {
        var events: [StallDetector.Event] = []
        if let pending = outstanding, let answer, answer.sequence >= pending.sequence {
            servingThread = answer.thread
            outstanding = nil
            if let stall = ongoing {
                events.append(.ended(stall, endedAt: max(answer.time, stall.start)))
                ongoing = nil
            }
        }
        guard let pending = outstanding else {
            lastSequence += 1
            outstanding = (lastSequence, now)
            return (events, lastSequence)
        }
        if ongoing == nil, servingThread != nil, now >= pending.postedAt + threshold * UInt64(count) {
            let onset = StallOnset(
                identifier: identifiers.next(), phase: .mainQueue, start: pending.postedAt, detectedAt: now,
                sequence: pending.sequence)
            ongoing = onset
            events.append(.began(onset))
        }
        return (events, nil)
    }

    /// When to look again: when the outstanding ping becomes a stall, else one threshold on.
    public func nextWake(after now: UInt64) -> UInt64 {
        if ongoing == nil, servingThread != nil, let pending = outstanding {
            let due = pending.postedAt + threshold * UInt64(count)
            if due > now { return min(due, now + threshold) }
        }
        return now + threshold
    }
}
