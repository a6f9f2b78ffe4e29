// External mode: judges a process's main thread idle or busy from /proc, with no agent inside, and speaks for it.
import StallwatchCore

/// Watches the main thread of a process that runs no agent, and produces the messages an agent would send.
///
/// Every threshold it reads `/proc/PID/task/PID/{stat,syscall}`. The thread is *idle* when it sleeps in an event-loop
/// wait — `epoll_wait`, `epoll_pwait`, `epoll_pwait2`, `poll`, `ppoll`, `select`, `pselect6`, where run loops
/// (CFRunLoop, GLib, libuv, asyncio, Qt, ...) rest — or is stopped by a signal or a debugger; otherwise it is *busy*:
/// running, or blocked in any other call. A `futex` wait counts as busy, with or without a timeout: a run loop at
/// rest never waits on one, and a main thread that does is waiting for a lock, a semaphore, a condition or a group
/// (`DispatchSemaphore.wait(timeout:)` included), which is the stall to report. A loop built on a timed condition
/// wait therefore looks stalled; watch such a program through its agent.
///
/// The readings feed the same ``StallDetector`` as the agent's, on a clock that ticks one threshold per sample, so
/// `count` consecutive busy samples make a stall whatever the collector's own delays. The real times reported are
/// estimates: a stall starts halfway between the last idle sample and the first busy one, and ends halfway between
/// the last busy sample and the first idle one, so each is within half a threshold.
final class ExternalWatcher {
    /// What one sample says about the main thread.
    enum Reading: Equatable {
        case idle
        case busy
    }

    /// The calls an event loop waits in when it has nothing to do.
    static let eventLoopWaits: Set<String> = [
        "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6",
    ]

    /// Classifies a reading of the main thread (see the type's discussion).
    static func classify(_ state: ThreadState) -> Reading {
        switch state.state {
        case "R", "D": return .busy
        case "T", "t", "Z", "X": return .idle
        default:
            if let syscall = state.syscall { return eventLoopWaits.contains(syscall) ? .idle : .busy }
            // The syscall file needs ptrace permission (preflight makes sure of it); wchan is the fallback. With
            // neither, a sleeping thread is taken as idle, so that no loop at rest is ever reported as stalled.
            guard let channel = state.waitChannel else { return .idle }
            return ["poll", "select"].contains(where: channel.contains) ? .idle : .busy
        }
    }

    let pid: Int32
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
    /// The estimated real start of the busy stretch in progress, and whether it was busy at the first look.
    private var busySince: UInt64 = 0
    private var busySinceFirstLook = false
    private var samplesTaken = 0
    private var announced = false
    /// When the next sample is due, `CLOCK_MONOTONIC` nanoseconds.
    private(set) var nextWake: UInt64
    /// Stalls already in progress at stallwatch's first look: their start is that look, not their real start.
    private(set) var startedAtFirstLook: Set<Int> = []

    init(pid: Int32, threshold: UInt64, count: Int, maxSamples: Int, now: UInt64) {
        self.pid = pid
        self.threshold = threshold
        self.maxSamples = maxSamples
        detector = StallDetector(threshold: threshold, count: count)
        nextWake = now
    }

    /// Takes the sample due now, if the thread can still be read.
    func step(now: UInt64) -> [AgentMessage] {
        nextWake += threshold
        // Behind schedule (a long capture): sample again one threshold from now rather than in a burst.
        if nextWake <= now { nextWake = now + threshold }
        guard let state = ThreadInspector.state(pid: pid, tid: pid) else { return [] }
        return observe(state, at: now)
    }

    /// Feeds one reading taken at `now`; returns the messages an agent would have sent.
    func observe(_ reading: ThreadState, at now: UInt64) -> [AgentMessage] {
        // A ptrace capture interrupts a sleep, which the kernel resumes as restart_syscall: the same call.
        let state = reading.continuing(previousState)
        previousState = state
        var messages: [AgentMessage] = []
        if !announced {
            announced = true
            messages.append(.watching(pid: pid, tid: pid))
        }
        let tick = (sampleIndex + 1) * threshold
        let isBusy = Self.classify(state) == .busy
        var endedAt = now
        if isBusy != busy || sampleIndex == 0 {
            let midpoint = previousSampleAt.map { $0 + (now - $0) / 2 } ?? now
            if isBusy {
                busySince = midpoint
                busySinceFirstLook = previousSampleAt == nil
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
            case .ended(let onset, _):
                messages.append(.stallEnded(pid: pid, identifier: onset.identifier, endedAt: max(endedAt, busySince)))
            case .began(let onset):
                if busySinceFirstLook { startedAtFirstLook.insert(onset.identifier) }
                samplesTaken = 1
                schedule = SampleSchedule(maxSamples: maxSamples)
                moment = 0
                _ = schedule.shouldSample(atMoment: moment)
                let real = StallOnset(
                    identifier: onset.identifier, phase: .notStarted, start: busySince, detectedAt: now,
                    sequence: onset.sequence)
                messages.append(.stallBegan(pid: pid, tid: pid, onset: real))
            }
        }
        if let ongoing = detector.ongoingStall,
            !events.contains(where: { if case .began = $0 { true } else { false } })
        {
            moment += 1
        }
        if let ongoing = detector.ongoingStall, moment > 0, schedule.shouldSample(atMoment: moment) {
            samplesTaken += 1
            messages.append(.stallSample(pid: pid, tid: pid, identifier: ongoing.identifier, index: samplesTaken))
        }
        previousSampleAt = now
        sampleIndex += 1
        return messages
    }
}
