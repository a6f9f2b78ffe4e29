// External mode: judges one thread of a process idle or busy from /proc, with no agent inside, and speaks for it.
import StallwatchCore

/// Watches one thread of a process from outside, and produces the messages an agent would send.
///
/// Every threshold it reads `/proc/PID/task/TID/{stat,syscall}` and judges the reading (``EventLoopReading``): idle
/// in an event-loop wait, at rest, or busy. Readings count only once the thread has been seen in an event-loop wait
/// (``EventLoopEvidence``): a thread that never waits in one runs no event loop, and its long sleep or futex wait is
/// no stall. A loop built on a timed condition wait therefore is never watched; watch such a program through its
/// agent.
///
/// The readings feed the same ``StallDetector`` as the agent's, on a clock that ticks one threshold per sample, so
/// `count` consecutive busy samples make a stall whatever the collector's own delays. The real times reported are
/// estimates: a stall starts halfway between the last idle sample and the first busy one, and ends halfway between
/// the last busy sample and the first idle one, so each is within half a threshold.
final class ExternalWatcher {
    let pid: Int32
    let tid: Int32
    private let threshold: UInt64
    private let maxSamples: Int
    /// Which of the current stall's moments (one per sampling tick) take a sample (see ``SampleSchedule``).
    private var schedule = SampleSchedule(maxSamples: 1)
    private var moment = 0
    private var detector: StallDetector
    /// The detector's view of the thread: a busy or an idle snapshot, renewed at each change.
    private var snapshot = ActivitySnapshot.initial
    private var sampleIndex: UInt64 = 0
    private var previousSampleAt: UInt64?
    private var previousState: ThreadState?
    private var busy = false
    /// The estimated real start of the busy stretch in progress.
    private var busySince: UInt64 = 0
    private var samplesTaken = 0
    /// The stall in progress, by the process's numbering.
    private var ongoingIdentifier: Int?
    private(set) var evidence = EventLoopEvidence()
    /// When the next sample is due, `CLOCK_MONOTONIC` nanoseconds.
    private(set) var nextWake: UInt64

    init(
        pid: Int32, tid: Int32? = nil, threshold: UInt64, count: Int, maxSamples: Int, now: UInt64,
        identifiers: StallIdentifiers = StallIdentifiers()
    ) {
        self.pid = pid
        self.tid = tid ?? pid
        self.threshold = threshold
        self.maxSamples = maxSamples
        detector = StallDetector(threshold: threshold, count: count, identifiers: identifiers)
        nextWake = now
    }

    /// Whether a stall of this thread is in progress.
    var isStalled: Bool { ongoingIdentifier != nil }

    /// Takes the sample due now; nil once the thread is gone.
    func step(now: UInt64) -> [AgentMessage]? {
        nextWake += threshold
        // Behind schedule (a long capture): sample again one threshold from now rather than in a burst.
        if nextWake <= now { nextWake = now + threshold }
        guard let state = ThreadInspector.state(pid: pid, tid: tid, waitChannelAlways: false) else { return nil }
        return observe(state, at: now)
    }

    /// The thread exited (or the process did): a stall in progress ended between when it was last seen busy and the
    /// sample after, found at `now` or missed (the process was gone by then, or the watch ended).
    func gone(at now: UInt64) -> [AgentMessage] {
        guard let identifier = ongoingIdentifier else { return [] }
        ongoingIdentifier = nil
        let lastSeen = previousSampleAt.map { $0 + min(now - $0, threshold) / 2 } ?? now
        return [.stallEnded(pid: pid, identifier: identifier, endedAt: max(lastSeen, busySince))]
    }

    /// Feeds one reading taken at `now`; returns the messages an agent would have sent.
    func observe(_ reading: ThreadState, at now: UInt64) -> [AgentMessage] {
        // A ptrace capture interrupts a sleep, which the kernel resumes as restart_syscall: the same call.
        let state = reading.continuing(previousState)
        previousState = state
        var messages: [AgentMessage] = []
        if evidence.note(state) { messages.append(.watching(pid: pid, tid: tid)) }
        // Not yet a loop: nothing to judge, and the first judged reading is the wait that proved it.
        guard evidence.isEventLoop else { return [] }
        let tick = (sampleIndex + 1) * threshold
        let isBusy = EventLoopReading(state).isBusy
        var endedAt = now
        if isBusy != busy || sampleIndex == 0 {
            let midpoint = previousSampleAt.map { $0 + (now - $0) / 2 } ?? now
            if isBusy {
                busySince = midpoint
                // Stamped at the previous tick, so that this sample is the first of the `count` that make a stall.
                snapshot = ActivitySnapshot(
                    sequence: snapshot.sequence + 1, phase: .afterWaiting, timestamp: tick - threshold)
            } else {
                endedAt = midpoint
                snapshot = ActivitySnapshot(sequence: snapshot.sequence + 1, phase: .sleeping, timestamp: tick)
            }
            busy = isBusy
        }
        let events = detector.observe(snapshot, now: tick)
        for event in events {
            switch event {
            case .ended:
                if let identifier = ongoingIdentifier {
                    messages.append(.stallEnded(pid: pid, identifier: identifier, endedAt: max(endedAt, busySince)))
                }
                ongoingIdentifier = nil
            case .began(let onset):
                let identifier = onset.identifier
                ongoingIdentifier = identifier
                samplesTaken = 1
                schedule = SampleSchedule(maxSamples: maxSamples)
                moment = 0
                _ = schedule.shouldSample(atMoment: moment)
                let real = StallOnset(
                    identifier: identifier, phase: .notStarted, start: busySince, detectedAt: now,
                    sequence: onset.sequence)
                messages.append(.stallBegan(pid: pid, tid: tid, onset: real))
            }
        }
        if detector.ongoingStall != nil, !events.contains(where: { if case .began = $0 { true } else { false } }) {
            moment += 1
        }
        if let identifier = ongoingIdentifier, moment > 0, schedule.shouldSample(atMoment: moment) {
            samplesTaken += 1
            messages.append(.stallSample(pid: pid, tid: tid, identifier: identifier, index: samplesTaken))
        }
        previousSampleAt = now
        sampleIndex += 1
        return messages
    }
}
