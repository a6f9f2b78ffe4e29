// The watcher thread: sleeps on a semaphore until the next moment a stall could be due, then checks.
import CStallwatchAgentSupport
import Dispatch
import Foundation
import StallwatchCore

/// Runs the ``StallDetector`` on its own thread against the ``ActivityBoard``.
///
/// The thread waits on a semaphore with a timeout, as the classic detector does, but the semaphore is only
/// posted to stop it: the main thread never touches it. Each timeout takes one reading of the board.
final class Watcher: @unchecked Sendable {
    private let board: ActivityBoard
    private let sink: StallSink
    private var detector: StallDetector
    private let stopSemaphore = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false
    private var announced = false

    private let modeTracker: ModeTracker?

    init(board: ActivityBoard, threshold: UInt64, count: Int, sink: StallSink, modeTracker: ModeTracker? = nil) {
        self.board = board
        self.sink = sink
        self.modeTracker = modeTracker
        self.detector = StallDetector(threshold: threshold, count: count)
    }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "stallwatch"
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
        while true {
            if modeTracker?.refresh() == true {
                // A mode appeared and the main loop was woken: let it publish before judging it.
                if waitForStop(until: now + detector.threshold / 4) { return }
                now = sw_agent_now_ns()
                continue
            }
            step(now: now)
            let wake = detector.nextWake(after: now)
            if waitForStop(until: wake) { return }
            now = sw_agent_now_ns()
        }
    }

    /// One reading: notices the loop's first activity, then feeds the detector.
    private func step(now: UInt64) {
        // The probe armed at the previous reading holds the first transition after it: the end of a stall
        // declared on that reading. Re-arm before reading again, and read again if the loop moved in
        // between, so the new probe starts exactly at the new reading.
        let firstTransitionSincePreviousReading = board.endProbe()
        var snapshot: ActivitySnapshot
        var attempts = 0
        repeat {
            board.armEndProbe()
            snapshot = board.read(now: now)
            attempts += 1
        } while board.endProbe() != nil && attempts < 100
        if !announced, snapshot.phase != .notStarted {
            announced = true
            sink.watchingStarted()
        }
        let events = detector.observe(
            snapshot, now: now, firstTransitionAfterOnset: firstTransitionSincePreviousReading)
        for event in events {
            switch event {
            case .began(let onset): sink.stallBegan(onset)
            case .ended(let onset, let endedAt): sink.stallEnded(onset, endedAt: endedAt)
            }
        }
        if let ongoing = detector.ongoingStall, !events.contains(.began(ongoing)) {
            sink.stallContinues(ongoing)
        }
    }

    /// Waits on the stop semaphore until `deadline` (`CLOCK_MONOTONIC` ns). True if asked to stop.
    private func waitForStop(until deadline: UInt64) -> Bool {
        let now = sw_agent_now_ns()
        let delay = deadline > now ? deadline - now : 0
        return stopSemaphore.wait(timeout: .now() + .nanoseconds(Int(delay))) == .success
    }
}
