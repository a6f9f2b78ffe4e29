// The watcher thread: sleeps on a semaphore until the next moment a stall could be due, then checks.
import CStallwatchAgentSupport
import CStallwatchSystem
import Dispatch
import Foundation
import StallwatchCore

/// Runs the ``StallDetector`` on its own thread against the ``ActivityBoard`` — or, for a program with no
/// run loop, the ``PingDetector`` against the ``PingBoard``.
///
/// The thread waits on a semaphore with a timeout, as the classic detector does, but the semaphore is only
/// posted to stop it: the main thread never touches it. Each timeout takes one reading of the board.
///
/// Strategy `auto` starts with the run loop. If no run-loop activity has appeared after
/// ``probeDelay`` (one threshold), it starts pinging the main queue; pings count only once one has been answered (so a
/// program's long set-up before its loop starts is not a stall), and the first answer while the run loop
/// is still silent switches to the ping strategy for good. Any run-loop activity stops the pinging.
final class Watcher: @unchecked Sendable {
    private let board: ActivityBoard
    private let sink: StallSink
    private var detector: StallDetector
    private let stopSemaphore = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false
    private var announced = false

    private let observation: MainLoopObservation?
    /// `--fps`: the frame ticks to drain on each wake; nil without `--fps`.
    private let frames: FrameRateWatch?
    private let strategy: WatchStrategy
    private var pings: PingDetector
    /// Set once the ping strategy is in use (a program without a run loop).
    private var pinging = false
    private let startedAt = sw_agent_now_ns()
    /// Set when observers were added to a new mode: the reading then, which is not to be judged on.
    private var awaitingTransition: (sequence: UInt64, since: UInt64)?
    /// The run loops of other threads (`--thread`), judged on this same thread.
    private let loopThreads: LoopThreadWatch

    /// How long `auto` waits for run-loop activity before it probes the main queue with pings. Probing
    /// early is safe: a ping sent before a run loop starts is answered inside that run loop, whose activity
    /// ends the probing, and unanswered pings never count.
    private var probeDelay: UInt64 { detector.threshold }

    init(
        board: ActivityBoard, settings: WatchSettings, sink: StallSink, observation: MainLoopObservation? = nil,
        frames: FrameRateWatch? = nil
    ) {
        self.board = board
        self.sink = sink
        self.observation = observation
        self.frames = frames
        self.strategy = settings.strategy
        // One numbering for every loop of the process: the collector tells stalls apart by pid and number.
        let identifiers = StallIdentifiers()
        // The main loop's observers leave out `beforeSources` (see ``RunLoopObservers``): its detector probes.
        self.detector = StallDetector(
            threshold: settings.thresholdNanoseconds, count: settings.count, identifiers: identifiers,
            probeInterval: StallDetector.probeInterval(forThreshold: settings.thresholdNanoseconds))
        self.pings = PingDetector(
            threshold: settings.thresholdNanoseconds, count: settings.count, identifiers: identifiers)
        loopThreads = LoopThreadWatch(settings: settings, identifiers: identifiers, sink: sink)
    }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in
            // The kernel's name, from the thread itself (Foundation on Linux may name it late): a collector that
            // watches `--thread all` from outside tells the agent's thread from the program's by it.
            _ = sw_set_thread_name(AgentThreadNames.watcher)
            run()
            finished.signal()
        }
        thread.name = AgentThreadNames.watcher
        // Small stack: the watcher's frames are shallow, and it lives in someone else's process.
        thread.stackSize = 256 * 1024
        thread.start()
        started = true
    }

    /// Stops the thread and waits for it, so no report is cut in half.
    func stop() {
        guard started else { return }
        stopSemaphore.signal()
        finished.wait()
        started = false
    }

    private func run() {
        var now = sw_agent_now_ns()
        // When the detector wants its next reading. With `--fps` the thread also wakes in between to drain
        // the frame ticks, and those extra wakes must not count as readings (they would take extra samples).
        var detectorDue = now
        // Looking for the main loop and its new modes locks the loop, which the main thread holds through most of an
        // iteration: at most four times a threshold, not at every progress probe's wake (one every few ms).
        var refreshedAt: UInt64 = 0
        while true {
            let refreshDue = now >= refreshedAt + detector.threshold / 4
            if refreshDue { refreshedAt = now }
            if refreshDue, observation?.refresh() == true {
                // The main loop or a mode appeared and the main loop was woken: its published state may be stale until the
                // main thread gets to run and goes through a transition, which on a busy machine can take a
                // while. Judge nothing on that stale state for up to one stall's age.
                awaitingTransition = (board.read().sequence, now)
                // A probe posted before holds the modes of then; this one reaches a loop running in the new mode.
                detector.forgetProbe()
                observation?.postProgressProbe()
                if waitForStop(until: now + detector.threshold / 4) { return }
                now = sw_agent_now_ns()
                continue
            }
            reportBusyPeriods(now: now, force: false)
            reportFrames()
            // Extra wakes (the frame ticks' drain, another loop thread's reading) must not count as readings.
            if (frames == nil && loopThreads.nextWake == nil) || now >= detectorDue {
                if usesPings(now: now) {
                    pingStep(now: now)
                    detectorDue = pings.nextWake(after: now)
                } else {
                    step(now: now)
                    detectorDue = detector.nextWake(after: now)
                }
            }
            loopThreads.step(now: now)
            sink.tick(now: now)
            var wake = frames == nil ? detectorDue : min(detectorDue, now + FrameRateWatch.drainInterval)
            if let sinkDue = sink.nextWake { wake = min(wake, sinkDue) }
            // A loop thread that appears is found at the next wake: at most one threshold away.
            if let loopsDue = loopThreads.nextWake { wake = min(wake, loopsDue) }
            if waitForStop(until: wake) { return }
            now = sw_agent_now_ns()
        }
    }

    /// One reading: notices the loop's first activity, then feeds the detector.
    private func step(now: UInt64) {
        let (snapshot, firstTransitionSincePreviousReading) = board.readWithEndProbe()
        if let awaiting = awaitingTransition {
            if snapshot.sequence == awaiting.sequence, now < awaiting.since + detector.stallAge { return }
            awaitingTransition = nil
        }
        if !announced, snapshot.phase != .notStarted {
            announced = true
            sink.watchingStarted(strategy: .runLoop)
        }
        let events = detector.observe(
            snapshot, now: now, firstTransitionAfterOnset: firstTransitionSincePreviousReading)
        if detector.wantsProbe(at: now) {
            observation?.postProgressProbe()
            // Recorded even when nothing could be posted (no loop attached yet): a loop with no observers publishes
            // nothing busy, so this only ever gives a published callout its chance to end.
            detector.probePosted(at: now)
        }
        for event in events {
            switch event {
            case .began(var onset):
                onset.mode = RunLoopModes.name(onset.modeIndex)
                sink.stallBegan(onset, thread: nil)
            case .ended(let onset, let endedAt): sink.stallEnded(onset, endedAt: endedAt)
            }
        }
        if let ongoing = detector.ongoingStall, !events.contains(.began(ongoing)) {
            sink.stallContinues(ongoing, thread: nil)
        }
    }

    /// Sends the busy-period histogram if it changed and a second has passed (or `force`, at exit).
    func reportBusyPeriods(now: UInt64, force: Bool) {
        guard force || now >= lastBusyReport.time + 1_000_000_000 else { return }
        let histogram = board.busyPeriodHistogram()
        let total = histogram.total
        guard total != lastBusyReport.total else { return }
        lastBusyReport = (now, total)
        sink.busyPeriods(histogram)
    }

    private var lastBusyReport: (time: UInt64, total: UInt64) = (0, 0)

    /// `--fps`: sends the frame-rate events of the ticks since the last wake.
    private func reportFrames() {
        guard let frames else { return }
        for event in frames.drain() { sink.frameRate(event) }
    }

    /// Whether to ping the main queue at this wake: always under `ping`; under `auto`, once the run loop
    /// has been silent for ``probeDelay`` and until it shows activity.
    private func usesPings(now: UInt64) -> Bool {
        switch strategy {
        case .runLoop: return false
        case .ping: return true
        case .auto:
            if pinging { return true }
            let phase = board.read().phase
            if phase == .notStarted { return now >= startedAt + probeDelay }
            // A main thread that left its loop and then exited for good (`RunLoop.main.run(until:)`, then
            // `dispatchMain()`): its loop will not run again, and its main queue is served elsewhere.
            return phase == .outsideLoop && detector.ongoingStall == nil && sw_agent_main_thread_exited() != 0
        }
    }

    /// One ping round: reads the latest answer, reports stall changes, posts the next ping if due.
    private func pingStep(now: UInt64) {
        let (events, post) = pings.observe(PingBoard.shared.latest(), now: now)
        if !pinging, pings.servingThread != nil {
            pinging = true
            announced = true
            sink.watchingStarted(strategy: .ping)
        }
        for event in events {
            switch event {
            case .began(let onset): sink.stallBegan(onset, thread: pings.servingThread)
            case .ended(let onset, let endedAt): sink.stallEnded(onset, endedAt: endedAt)
            }
        }
        if let ongoing = pings.ongoingStall, !events.contains(.began(ongoing)) {
            sink.stallContinues(ongoing, thread: pings.servingThread)
        }
        if let sequence = post { PingBoard.shared.post(sequence) }
    }

    /// Waits on the stop semaphore until `deadline` (`CLOCK_MONOTONIC` ns). True if asked to stop.
    private func waitForStop(until deadline: UInt64) -> Bool {
        let now = sw_agent_now_ns()
        let delay = deadline > now ? deadline - now : 0
        return stopSemaphore.wait(timeout: .now() + .nanoseconds(Int(delay))) == .success
    }
}
