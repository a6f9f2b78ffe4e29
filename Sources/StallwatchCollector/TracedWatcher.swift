// The kernel trace source for one thread: its loop's waits as the kernel recorded them, judged by the one detector.
import CStallwatchTrace
import StallwatchCore

/// Watches one thread of a process through the kernel's record of its event-loop waits (``KernelTrace``), and
/// produces the messages an agent would send.
///
/// The kernel stamps every entry into and exit from the loop's wait, so a busy period is exit-of-wait to entry of
/// the next one, timed exactly, and a loaded loop that waits thousands of times a second is never mistaken for a
/// stalled one (which sampling `/proc` can do). A wait the loop does not rest in is busy: a zero-timeout poll (a
/// look, as CoreFoundation's loop takes each iteration) and, once the loop's own wait is learned, a wait on another
/// descriptor (a handler's nested `poll` or `read`). The loop's wait is learned as the one the thread rests in three
/// readings running.
final class TracedWatcher {
    let pid: Int32
    let tid: Int32
    private let trace: KernelTrace
    private let threshold: UInt64
    private let maxSamples: Int
    private var detector: StallDetector
    private var schedule = SampleSchedule(maxSamples: 1)
    private var moment = 0
    private var samplesTaken = 0
    private var ongoingIdentifier: Int?
    /// Raised at each stall's onset, so the kernel records the first move after it: the stall's end.
    private var epoch: UInt64 = 0
    private var loopIdentity: UInt64 = 0
    private var candidate: (identity: UInt64, readings: Int)?
    private var lastWaits: UInt64 = 0
    private(set) var isEventLoop = false
    private var previousReadingAt: UInt64?
    private var lastSequence: UInt64 = .max
    private(set) var nextWake: UInt64
    /// Whether the kernel follows the thread at all (it may refuse past its table's size).
    let followed: Bool

    /// Readings in a row the thread must rest in one wait before it is taken as the loop's.
    static let readingsToLearnLoop = 3

    init(
        pid: Int32, tid: Int32, trace: KernelTrace, threshold: UInt64, count: Int, maxSamples: Int, now: UInt64,
        identifiers: StallIdentifiers
    ) {
        self.pid = pid
        self.tid = tid
        self.trace = trace
        self.threshold = threshold
        self.maxSamples = maxSamples
        detector = StallDetector(threshold: threshold, count: count, identifiers: identifiers)
        nextWake = now
        followed = trace.watch(tid: tid)
        // A loop resting since before it was followed has made no move the kernel could record: /proc shows it.
        if followed, let state = ThreadInspector.state(pid: pid, tid: tid, waitChannelAlways: false),
            EventLoopReading(state) == .waiting
        {
            trace.markWaiting(tid: tid)
        }
    }

    deinit {
        trace.unwatch(tid: tid)
    }

    var isStalled: Bool { ongoingIdentifier != nil }

    var notWatchedReason: String {
        followed ? evidence.notWatchedReason : "the kernel trace follows at most \(SW_TRACE_MAX_THREADS) threads"
    }

    /// What the thread was seen doing while it was not yet known as a loop, for ``notWatchedReason``.
    private var evidence = EventLoopEvidence()

    /// Judges the thread's record as read (with every other thread's, in one batch); nil once the thread is gone.
    func step(now: UInt64, reading: KernelReading) -> [AgentMessage]? {
        guard let state = reading.state(of: tid) else { return nil }
        nextWake = now + threshold
        // A loop at rest whose record did not change: nothing to judge, nothing to read, however many such threads
        // are followed (a pool's exit is found by the task list's next reading).
        if isEventLoop, ongoingIdentifier == nil, state.phase == SW_TRACE_WAITING.rawValue,
            state.sequence == lastSequence
        {
            previousReadingAt = now
            return []
        }
        // A thread that moved since the last reading was there to move; one that stayed busy may have exited.
        if state.sequence == lastSequence, ThreadInspector.statFields(pid: pid, tid: tid) == nil { return nil }
        lastSequence = state.sequence
        previousReadingAt = now
        var messages: [AgentMessage] = []
        learnLoop(state)
        if !isEventLoop {
            // As from /proc: a loop is a thread found resting in its wait, or one that rested in one wait again and
            // again. One short poll (a library's, a helper thread's) before a life in a futex proves nothing.
            guard state.phase == SW_TRACE_WAITING.rawValue || loopIdentity != 0 else {
                if let seen = ThreadInspector.state(pid: pid, tid: tid, waitChannelAlways: false) {
                    _ = evidence.note(seen)
                }
                return messages
            }
            isEventLoop = true
            messages.append(.watching(pid: pid, tid: tid))
        }
        guard state.phase != SW_TRACE_UNSEEN.rawValue else { return messages }
        let snapshot = ActivitySnapshot(
            sequence: state.sequence, phase: state.phase == SW_TRACE_WAITING.rawValue ? .sleeping : .afterWaiting,
            timestamp: state.stamp_ns)
        let firstMove = ongoingIdentifier != nil && state.epoch_seen == epoch ? state.first_move_ns : nil
        let events = detector.observe(snapshot, now: now, firstTransitionAfterOnset: firstMove)
        for event in events {
            switch event {
            case .ended(_, let endedAt):
                if let identifier = ongoingIdentifier {
                    messages.append(.stallEnded(pid: pid, identifier: identifier, endedAt: endedAt))
                }
                ongoingIdentifier = nil
            case .began(let onset):
                ongoingIdentifier = onset.identifier
                epoch += 1
                trace.control(tid: tid, loopIdentity: loopIdentity, epoch: epoch)
                samplesTaken = 1
                schedule = SampleSchedule(maxSamples: maxSamples)
                moment = 0
                _ = schedule.shouldSample(atMoment: moment)
                // Seen from outside: which run-loop phase the thread was in is not known.
                let outside = StallOnset(
                    identifier: onset.identifier, phase: .notStarted, start: onset.start, detectedAt: now,
                    sequence: onset.sequence)
                messages.append(.stallBegan(pid: pid, tid: tid, onset: outside))
            }
        }
        if let identifier = ongoingIdentifier, !events.contains(where: { if case .began = $0 { true } else { false } })
        {
            moment += 1
            if schedule.shouldSample(atMoment: moment) {
                samplesTaken += 1
                messages.append(.stallSample(pid: pid, tid: tid, identifier: identifier, index: samplesTaken))
            }
        }
        nextWake = detector.nextWake(after: now)
        return messages
    }

    /// The thread exited: a stall in progress ended between the last reading that found it and now (at most half a
    /// threshold after that reading), as a thread sampled from `/proc` does.
    func gone(at now: UInt64) -> [AgentMessage] {
        guard let identifier = ongoingIdentifier, let onset = detector.ongoingStall else { return [] }
        ongoingIdentifier = nil
        let lastSeen = previousReadingAt.map { $0 + min(now - $0, threshold) / 2 } ?? now
        return [.stallEnded(pid: pid, identifier: identifier, endedAt: max(lastSeen, onset.start))]
    }

    /// The loop's wait: the one the thread rested in at ``readingsToLearnLoop`` readings in a row.
    private func learnLoop(_ state: sw_trace_state) {
        defer { lastWaits = state.waits }
        guard loopIdentity == 0, state.waits > lastWaits else { return }
        if candidate?.identity == state.wait_identity {
            candidate?.readings += 1
        } else {
            candidate = (state.wait_identity, 1)
        }
        guard let candidate, candidate.readings >= Self.readingsToLearnLoop else { return }
        loopIdentity = candidate.identity
        trace.control(tid: tid, loopIdentity: loopIdentity, epoch: epoch)
    }
}
