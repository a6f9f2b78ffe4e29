// The stall rule, as pure logic: fed readings and times, it says when a stall begins and ends.

/// Decides when the main run loop is stalled.
///
/// The rule is the classic detector's: a watcher waits `threshold` for the loop to move; a timeout while
/// the loop is busy counts; `count` consecutive timeouts make a stall. Any progress resets the count, an
/// idle (sleeping) loop never counts, and a declared stall ends at the loop's next transition.
///
/// The classic version signals a semaphore on every activity. Here the main thread only publishes an
/// ``ActivitySnapshot`` (a few nanoseconds of atomic stores) and the watcher reads it when it wakes:
/// `count` consecutive timeouts since a busy transition at time *t* is the same thing as the loop still
/// sitting on that transition at *t* + `count` × `threshold`, so the watcher sleeps until exactly then.
///
/// With a ``probeInterval`` the loop publishes only some of its transitions (the main run loop's observers leave out
/// `beforeSources`, whose dispatch cost more than a whole iteration of a tight loop): a loop that chains callouts
/// without sleeping shows no progress by itself. The watcher then asks it for a sign of progress (a probe, answered
/// between two callouts) once the reading is one interval old, and a stall needs a probe left unanswered: the loop
/// has not been between two callouts since the probe was posted. The start is the last progress seen, so it is
/// known to within the interval (and the watcher's lateness in posting); the end is exact, the pending probe being
/// answered as soon as the callout returns.
public struct StallDetector: Sendable {
    /// A change the watcher must act on.
    public enum Event: Equatable, Sendable {
        /// A stall was declared: the loop has been busy on one transition for `count` timeouts.
        case began(StallOnset)
        /// The declared stall ended: the loop moved again at `endedAt`.
        case ended(StallOnset, endedAt: UInt64)
    }

    public let threshold: UInt64
    public let count: Int
    private var current = ActivitySnapshot.initial
    private var ongoing: StallOnset?
    private let identifiers: StallIdentifiers
    /// How old a busy reading gets before the loop is probed; nil when every transition is published.
    public let probeInterval: UInt64?
    /// The reading the outstanding probe was posted on, and when: the probe is pending while that reading is current.
    private var probe: (sequence: UInt64, postedAt: UInt64)?

    /// - Parameters:
    ///   - threshold: the watcher's timeout, in nanoseconds (> 0).
    ///   - count: consecutive busy timeouts that make a stall (≥ 1).
    ///   - identifiers: where stall numbers come from; one process's detectors (one per loop) share them.
    ///   - probeInterval: set when the loop does not publish every transition (see the type's discussion).
    public init(
        threshold: UInt64, count: Int, identifiers: StallIdentifiers = StallIdentifiers(), probeInterval: UInt64? = nil
    ) {
        precondition(threshold > 0 && count > 0, "validated by the caller")
        self.threshold = threshold
        self.count = count
        self.identifiers = identifiers
        self.probeInterval = probeInterval.map { max($0, 1) }
    }

    /// The probe interval for a threshold: a sixteenth of it, from 1 ms to 5 ms (and never above the threshold), so
    /// a stall's start is known to a few milliseconds while a busy loop costs the watcher at most 1000 wakes a second.
    public static func probeInterval(forThreshold threshold: UInt64) -> UInt64 {
        min(threshold, min(max(threshold / 16, 1_000_000), 5_000_000))
    }

    /// Whether the watcher should probe the loop at `now`: the reading is busy, not yet probed, and half an interval
    /// old (so that the answer to the last probe, read one interval after it was posted, is probed again at once:
    /// one wake per interval while the loop keeps answering).
    public func wantsProbe(at now: UInt64) -> Bool {
        guard let probeInterval, ongoing == nil, current.phase.isBusy, !probePending else { return false }
        return now >= current.timestamp + probeInterval / 2
    }

    /// The watcher posted a probe at `now`, on the current reading.
    public mutating func probePosted(at now: UInt64) {
        probe = (current.sequence, now)
    }

    /// Forgets the outstanding probe (it may never be answered: posted for modes the loop no longer runs).
    public mutating func forgetProbe() {
        probe = nil
    }

    private var probePending: Bool { probe?.sequence == current.sequence }

    /// How long an unanswered probe must wait before the loop is judged stuck: the stall's age less one threshold and
    /// one interval, and at least one interval, so that a probe posted late has its own chance to be answered.
    ///
    /// One threshold less because the watcher sleeps a threshold at a time while the loop sleeps, and so posts its
    /// first probe on a loop that woke up to a threshold (and one interval) late: a stall in the first callout after
    /// waking is still declared at its age, not up to a threshold later. The price: a callout proven stuck for all but
    /// one threshold (and one interval) of the stall's age, right after a wake-up the watcher did not see at once and
    /// a chain of shorter callouts it could not see, is declared from the wake-up; a probe posted on time proves all
    /// but one interval.
    private func probeGrace(_ probeInterval: UInt64) -> UInt64 {
        let unproven = threshold + probeInterval
        return max(stallAge > unproven ? stallAge - unproven : 0, probeInterval)
    }

    /// Whether the reading can be judged at `now`: always without probes; with them, once a probe posted on it has
    /// stayed unanswered for its grace.
    private func provenStuck(at now: UInt64) -> Bool {
        guard let probeInterval else { return true }
        guard let probe, probePending else { return false }
        return now >= probe.postedAt + probeGrace(probeInterval)
    }

    /// The stall in progress, if any.
    public var ongoingStall: StallOnset? { ongoing }

    /// Time a busy transition must stand before it is a stall.
    public var stallAge: UInt64 { threshold * UInt64(count) }

    /// Consecutive timeouts the watcher would have counted by `now` on the current reading.
    public func timeouts(at now: UInt64) -> Int {
        guard current.phase.isBusy, now > current.timestamp else { return 0 }
        return Int((now - current.timestamp) / threshold)
    }

    /// Takes a new reading of the loop's state.
    ///
    /// - Parameters:
    ///   - snapshot: the latest published transition.
    ///   - now: the watcher's clock, same time base as `snapshot.timestamp`.
    ///   - firstTransitionAfterOnset: when the loop first moved after the ongoing stall was declared, if
    ///     the agent recorded it; otherwise the snapshot's own time is used as the end.
    /// - Returns: the stall that ended, then the stall that began, in that order.
    public mutating func observe(
        _ snapshot: ActivitySnapshot, now: UInt64, firstTransitionAfterOnset: UInt64? = nil
    ) -> [Event] {
        var events: [Event] = []
        if snapshot.sequence != current.sequence {
            if let stall = ongoing {
                let end = max(firstTransitionAfterOnset ?? snapshot.timestamp, stall.start)
                events.append(.ended(stall, endedAt: end))
                ongoing = nil
            }
            current = snapshot
        }
        if ongoing == nil, timeouts(at: now) >= count, provenStuck(at: now) {
            let onset = StallOnset(
                identifier: identifiers.next(), phase: current.phase, start: current.timestamp,
                detectedAt: now, sequence: current.sequence,
                modeIndex: current.mode == 0 ? nil : current.mode)
            ongoing = onset
            events.append(.began(onset))
        }
        return events
    }

    /// When the watcher should wake next, given the last reading.
    ///
    /// While the loop is busy on one transition, that is the moment the transition becomes a stall; while
    /// a stall lasts or the loop is idle, one threshold later.
    public func nextWake(after now: UInt64) -> UInt64 {
        if ongoing == nil, current.phase.isBusy {
            var due = current.timestamp + stallAge
            if let probeInterval {
                if let probe, probePending {
                    // One interval after posting, to read the answer; if there is none by then, when it proves a stall.
                    let answerDue = probe.postedAt + probeInterval
                    due = now < answerDue ? answerDue : max(due, probe.postedAt + probeGrace(probeInterval))
                } else {
                    due = min(due, current.timestamp + probeInterval)
                }
            }
            if due > now { return due }
            // Due already: a probe to post (the caller posts it at this wake), or a reading judged late.
            if probeInterval != nil, !probePending { return now }
        }
        return now + threshold
    }
}

/// Numbers one process's stalls from 1, across every loop watched in it: the collector tells stalls apart by
/// process and number.
///
/// Used by one thread at a time (the watcher's, or the collector's), hence unchecked.
public final class StallIdentifiers: @unchecked Sendable {
    private var last: Int

    /// - Parameter after: the last number already used (stalls numbered by someone else come first).
    public init(after: Int = 0) {
        last = after
    }

    public func next() -> Int {
        last += 1
        return last
    }
}

/// The moment a stall was declared: what the loop was doing and since when.
public struct StallOnset: Equatable, Sendable, Codable {
    /// Numbers stalls from 1 within one watched process.
    public var identifier: Int
    public var phase: LoopPhase
    /// The last transition before the stall, `CLOCK_MONOTONIC` nanoseconds.
    public var start: UInt64
    /// When the watcher declared it.
    public var detectedAt: UInt64
    public var sequence: UInt64
    /// The run-loop mode the loop was running in when the stall began (`kCFRunLoopDefaultMode`, a private
    /// mode); nil outside any loop, for pings, or when unknown. The detector leaves it nil: the agent names it.
    public var mode: String?
    /// The agent's index of that mode (0 for none), which the agent turns into ``mode``.
    public var modeIndex: UInt8?

    public init(
        identifier: Int, phase: LoopPhase, start: UInt64, detectedAt: UInt64, sequence: UInt64, mode: String? = nil,
        modeIndex: UInt8? = nil
    ) {
        self.identifier = identifier
        self.phase = phase
        self.start = start
        self.detectedAt = detectedAt
        self.sequence = sequence
        self.mode = mode
        self.modeIndex = modeIndex
    }
}
