// The agent's public API: start and stop watching the main run loop from inside the program.
import CStallwatchAgentSupport
import CoreFoundation
import Foundation
import StallwatchCore
import StallwatchSymbols

/// Watches the main run loop of the current process and reports its stalls.
///
/// `stallwatch run` injects this agent with `LD_PRELOAD` and needs no code in the program. A program can
/// also link it and start it itself:
///
/// ```swift
/// let monitor = try StallMonitor.start { report in
///     print("main thread stalled for \(report.duration ?? 0) ns in \(report.culprit?.symbol ?? "?")")
/// }
/// ```
///
/// Started that way, the stack is captured in-process with a signal (see ``InProcessCapture``) and
/// symbolicated in-process; the handler runs on the watcher thread when the stall ends.
public final class StallMonitor: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The watcher's timeout; `count` consecutive busy timeouts make a stall.
        public var threshold: Duration
        public var count: Int
        /// Stacks per stall: one at detection, then one per threshold while it lasts.
        public var maxSamples: Int

        public init(threshold: Duration = .milliseconds(80), count: Int = 3, maxSamples: Int = 10) {
            self.threshold = threshold
            self.count = count
            self.maxSamples = maxSamples
        }
    }

    public enum StartError: Error, CustomStringConvertible {
        case invalidConfiguration(String)
        case alreadyRunning

        public var description: String {
            switch self {
            case .invalidConfiguration(let reason): "invalid configuration: \(reason)"
            case .alreadyRunning: "a StallMonitor is already running in this process"
            }
        }
    }

    nonisolated(unsafe) private static var running: StallMonitor?
    /// Sends what the watcher has not sent yet; run by an `atexit` handler.
    nonisolated(unsafe) private static var finalReport: (() -> Void)?
    nonisolated(unsafe) private static var exitHandlerInstalled = false
    private static let lock = NSLock()

    private let watcher: Watcher
    private let observers: [CFRunLoopObserver]
    private let sink: StallSink
    /// `--fps`: the frame tick and what turns its ticks into readings.
    private let frameTick: (timer: CFRunLoopTimer, watch: FrameRateWatch)?

    private init(
        watcher: Watcher, observers: [CFRunLoopObserver], sink: StallSink,
        frameTick: (timer: CFRunLoopTimer, watch: FrameRateWatch)?
    ) {
        self.watcher = watcher
        self.observers = observers
        self.sink = sink
        self.frameTick = frameTick
    }

    /// Starts watching with `handler` receiving each stall when it ends.
    public static func start(
        _ configuration: Configuration = Configuration(), handler: @escaping @Sendable (StallReport) -> Void
    ) throws(StartError) -> StallMonitor {
        let threshold = try nanoseconds(configuration)
        return try start(
            threshold: threshold, count: configuration.count,
            sink: HandlerSink(
                threshold: threshold, count: configuration.count, maxSamples: configuration.maxSamples,
                handler: handler))
    }

    /// Stops watching. A stall in progress is reported as unfinished.
    public func stop() {
        Self.lock.lock()
        defer { Self.lock.unlock() }
        guard Self.running === self else { return }
        RunLoopObservers.remove(observers)
        if let frameTick { FrameTickTimer.remove(frameTick.timer) }
        watcher.stop()
        if let frameTick { for event in frameTick.watch.finish() { sink.frameRate(event) } }
        Self.finalReport = nil
        (sink as? HandlerSink)?.flushUnfinished()
        Self.running = nil
    }

    /// - Parameter frameRate: `--fps`'s settings; nil runs no frame tick.
    static func start(
        threshold: UInt64, count: Int, sink: StallSink, frameRate: FrameRateMonitor.Configuration? = nil
    ) throws(StartError) -> StallMonitor {
        lock.lock()
        defer { lock.unlock() }
        guard running == nil else { throw .alreadyRunning }
        let observers = RunLoopObservers.install()
        let strategy = ProcessInfo.processInfo.environment[AgentEnvironment.strategy].flatMap(Strategy.init) ?? .auto
        let frameTick = frameRate.flatMap { configuration in
            FrameTickTimer.install(interval: configuration.frameInterval).map { timer in
                (timer: timer, watch: FrameRateWatch(ring: FrameTickTimer.ring, configuration: configuration))
            }
        }
        let watcher = Watcher(
            board: ActivityBoard.shared, threshold: threshold, count: count, sink: sink,
            modeTracker: ModeTracker(observers: observers), strategy: strategy, frames: frameTick?.watch)
        watcher.start()
        // The last second of busy periods (and of frame rates) would be lost at exit: send them from an exit
        // handler too.
        finalReport = {
            watcher.reportBusyPeriods(now: sw_agent_now_ns(), force: true)
            if let frameTick { for event in frameTick.watch.finish() { sink.frameRate(event) } }
        }
        if !exitHandlerInstalled {
            exitHandlerInstalled = true
            atexit { StallMonitor.finalReport?() }
        }
        let monitor = StallMonitor(watcher: watcher, observers: observers, sink: sink, frameTick: frameTick)
        running = monitor
        return monitor
    }

    private static func nanoseconds(_ configuration: Configuration) throws(StartError) -> UInt64 {
        let (seconds, attoseconds) = configuration.threshold.components
        guard seconds >= 0, configuration.threshold > .zero else {
            throw .invalidConfiguration("threshold must be positive")
        }
        guard (1...100).contains(configuration.count) else {
            throw .invalidConfiguration("count must be between 1 and 100")
        }
        guard (1...1000).contains(configuration.maxSamples) else {
            throw .invalidConfiguration("maxSamples must be between 1 and 1000")
        }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}

/// Library mode: captures and symbolicates in-process, hands finished reports to the app's handler.
final class HandlerSink: StallSink {
    private let threshold: UInt64
    private let count: Int
    private let maxSamples: Int
    private let handler: @Sendable (StallReport) -> Void
    // In-process: the toolchain's symbolicator only, never a helper process forked from the app.
    private let symbolicator = Symbolicator()
    private var pending: StallReport?
    private var images: ProcessImages?

    init(threshold: UInt64, count: Int, maxSamples: Int, handler: @escaping @Sendable (StallReport) -> Void) {
        self.threshold = threshold
        self.count = count
        self.maxSamples = maxSamples
        self.handler = handler
    }

    func watchingStarted() {}

    func busyPeriods(_ histogram: LatencyHistogram) {}

    /// The library API has no frame-rate handler (yet): `--fps` is a `stallwatch run` feature.
    func frameRate(_ event: FrameRateMonitor.Event) {}

    func stallBegan(_ onset: StallOnset, thread: Int32?) {
        let pid = getpid()
        images = ProcessImages.captureCurrentProcess()
        pending = StallReport(
            identifier: onset.identifier, pid: pid, tid: thread ?? pid,
            processName: ProcessInfo.processInfo.processName,
            phase: onset.phase, start: onset.start, end: nil, detectedAt: onset.detectedAt,
            thresholdNanoseconds: threshold, count: count, captureMethod: .signal, samples: [])
        takeSample()
    }

    func stallContinues(_ onset: StallOnset, thread: Int32?) {
        guard let report = pending, report.identifier == onset.identifier, report.samples.count < maxSamples else {
            return
        }
        takeSample()
    }

    private func takeSample() {
        guard var report = pending, let images else { return }
        let capture = InProcessCapture.capture(tid: report.tid)
        if capture.addresses.isEmpty {
            report.captureNote = capture.error
            if report.samples.isEmpty { report.captureMethod = .none }
        } else {
            let frames = symbolicator.symbolicate(capture.addresses, images: images)
            report.samples.append(
                Sample(frames: frames, capturedAt: capture.capturedAt, stoppedNanoseconds: capture.stoppedNanoseconds))
        }
        pending = report
    }

    func stallEnded(_ onset: StallOnset, endedAt: UInt64) {
        guard var report = pending, report.identifier == onset.identifier else { return }
        report.end = endedAt
        pending = nil
        handler(report)
    }

    /// Reports a stall still in progress when the monitor stops.
    func flushUnfinished() {
        if let report = pending {
            pending = nil
            handler(report)
        }
    }
}
