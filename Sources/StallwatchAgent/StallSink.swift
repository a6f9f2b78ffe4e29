// Where the watcher sends what it finds: to the stallwatch collector, or to the app's own handler.
import StallwatchCore

/// Receives the watcher's findings, on the watcher's thread.
protocol StallSink: AnyObject {
    /// Watching began: the main run loop ran for the first time (`runLoop`), or a main-queue ping was answered in a
    /// program without one (`ping`).
    func watchingStarted(strategy: WatchStrategy)
    /// A loop thread other than the main one ran its watched run loop for the first time (`--thread`).
    func loopThreadWatched(tid: Int32)
    /// A stall was declared; the sink arranges for the stalled thread's stack to be captured now.
    /// `thread` is the thread serving the main queue under the ping strategy, or the loop thread whose loop stalled;
    /// nil means the main thread.
    func stallBegan(_ onset: StallOnset, thread: Int32?)
    /// The stall is still going on, one more threshold later: time for another sample.
    func stallContinues(_ onset: StallOnset, thread: Int32?)
    /// The run loop's busy periods so far (sent about once a second while they change, and at exit).
    func busyPeriods(_ histogram: LatencyHistogram)
    /// The stall ended when the loop moved again at `endedAt`.
    func stallEnded(_ onset: StallOnset, endedAt: UInt64)
    /// `--fps`: a second's frame-rate reading or a run of dropped frames.
    func frameRate(_ event: FrameRateMonitor.Event)
    /// Each wake of the watcher: the sink collects what it awaits (library mode's helper answers) without waiting.
    func tick(now: UInt64)
    /// When the sink wants the watcher to wake next for ``tick(now:)``; nil when it awaits nothing.
    var nextWake: UInt64? { get }
}

extension StallSink {
    func tick(now: UInt64) {}
    var nextWake: UInt64? { nil }
}
