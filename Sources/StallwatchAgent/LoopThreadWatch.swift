// The watcher's side of the threads other than the main one: one detector per watched thread, on the watcher's own
// thread.
import CStallwatchAgentSupport
import StallwatchCore

/// A thread other than the main one that publishes its activity to a board of its own: a run-loop thread
/// (``LoopThread``) or a Swift concurrency executor thread (``ExecutorThread``).
protocol WatchedThread: AnyObject {
    var tid: Int32 { get }
    var board: ActivityBoard { get }
    /// When the thread exited, `CLOCK_MONOTONIC` ns; 0 while it lives.
    func exitTime() -> UInt64
    /// Drops the thread from the list it was found in, once it exited.
    func forget()
}

/// Judges every watched loop thread (``LoopThreads``) and executor thread (``ExecutorThreads``) by the main loop's
/// rule, from the watcher thread: no thread of its own per loop, and nothing on the watched threads but their stores.
final class LoopThreadWatch {
    private struct Watched {
        let thread: any WatchedThread
        var detector: StallDetector
        var announced = false
        var due: UInt64
    }

    private let settings: WatchSettings
    private let identifiers: StallIdentifiers
    private let sink: StallSink
    private var watched: [ObjectIdentifier: Watched] = [:]

    /// - Parameter identifiers: the process's stall numbers, shared with the main loop's detector.
    init(settings: WatchSettings, identifiers: StallIdentifiers, sink: StallSink) {
        self.settings = settings
        self.identifiers = identifiers
        self.sink = sink
    }

    /// When a loop thread needs its next reading; nil with none watched.
    var nextWake: UInt64? { watched.values.map(\.due).min() }

    /// Takes the readings due at `now`, and notices threads that appeared or exited since the last wake.
    func step(now: UInt64) {
        LoopThreads.pickCandidates(now: now)
        let threads: [any WatchedThread] = LoopThreads.current() + ExecutorThreads.current()
        for thread in threads where watched[ObjectIdentifier(thread)] == nil {
            watched[ObjectIdentifier(thread)] = Watched(
                thread: thread,
                detector: StallDetector(
                    threshold: settings.thresholdNanoseconds, count: settings.count, identifiers: identifiers),
                due: now)
        }
        for key in Array(watched.keys) {
            guard var entry = watched[key] else { continue }
            let exitedAt = entry.thread.exitTime()
            if exitedAt != 0 {
                // Gone in the middle of a callout: the stall ended then. Outside its loop, it was the thread's end.
                if let onset = entry.detector.ongoingStall, !onset.phase.isOutsideLoop {
                    sink.stallEnded(onset, endedAt: max(exitedAt, onset.start))
                }
                watched[key] = nil
                entry.thread.forget()
                continue
            }
            guard now >= entry.due else { continue }
            let (snapshot, firstTransition) = entry.thread.board.readWithEndProbe()
            if !entry.announced, snapshot.phase != .notStarted {
                entry.announced = true
                sink.loopThreadWatched(tid: entry.thread.tid)
            }
            let events = entry.detector.observe(snapshot, now: now, firstTransitionAfterOnset: firstTransition)
            for event in events {
                switch event {
                case .began(let onset): sink.stallBegan(onset, thread: entry.thread.tid)
                case .ended(let onset, let endedAt): sink.stallEnded(onset, endedAt: endedAt)
                }
            }
            if let ongoing = entry.detector.ongoingStall, !events.contains(.began(ongoing)) {
                sink.stallContinues(ongoing, thread: entry.thread.tid)
            }
            entry.due = entry.detector.nextWake(after: now)
            watched[key] = entry
        }
    }
}
