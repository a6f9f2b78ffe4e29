// The agent's public API: start and stop watching the main run loop from inside the program.
import CStallwatchAgentSupport
import CoreFoundation
import Foundation
import StallwatchCore
import StallwatchImages

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
        /// Observe the run loop, ping the main queue, or the run loop and pings for a program that has none.
        public var strategy: WatchStrategy

        public init(
            threshold: Duration = .nanoseconds(Int64(WatchSettings().thresholdNanoseconds)),
            count: Int = WatchSettings().count, maxSamples: Int = WatchSettings().maxSamples,
            strategy: WatchStrategy = .auto
        ) {
            self.threshold = threshold
            self.count = count
            self.maxSamples = maxSamples
            self.strategy = strategy
        }

        /// The same settings as `stallwatch run` takes; nil when the threshold is not positive or longer than a
        /// year. `STALLWATCH_STRATEGY` in the environment chooses the strategy, as under `stallwatch run`.
        var settings: WatchSettings? {
            guard threshold > .zero, threshold < .seconds(365 * 86_400) else { return nil }
            let environment = ProcessInfo.processInfo.environment
            return WatchSettings(
                thresholdNanoseconds: threshold.nanoseconds, count: count, maxSamples: maxSamples,
                strategy: environment[AgentEnvironment.strategy].flatMap(WatchStrategy.init) ?? strategy)
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
    private let observation: MainLoopObservation
    private let sink: StallSink
    /// `--fps`: what turns the frame tick's ticks into readings.
    private let frameRate: FrameRateWatch?

    private init(watcher: Watcher, observation: MainLoopObservation, sink: StallSink, frameRate: FrameRateWatch?) {
        self.watcher = watcher
        self.observation = observation
        self.sink = sink
        self.frameRate = frameRate
    }

    /// Starts watching with `handler` receiving each stall when it ends.
    public static func start(
        _ configuration: Configuration = Configuration(), handler: @escaping @Sendable (StallReport) -> Void
    ) throws(StartError) -> StallMonitor {
        guard let settings = configuration.settings else { throw .invalidConfiguration("threshold must be positive") }
        if let invalid = settings.invalidSetting { throw .invalidConfiguration(invalid) }
        return try start(settings: settings, sink: HandlerSink(settings: settings, handler: handler))
    }

    /// Stops watching. A stall in progress is reported as unfinished.
    public func stop() {
        Self.lock.lock()
        defer { Self.lock.unlock() }
        guard Self.running === self else { return }
        observation.detach()
        watcher.stop()
        if let frameRate { for event in frameRate.finish() { sink.frameRate(event) } }
        Self.finalReport = nil
        (sink as? HandlerSink)?.flushUnfinished()
        Self.running = nil
    }

    /// Starts the watcher with `settings` (their `frameRate` runs the frame tick), reporting to `sink`.
    static func start(settings: WatchSettings, sink: StallSink) throws(StartError) -> StallMonitor {
        lock.lock()
        defer { lock.unlock() }
        guard running == nil else { throw .alreadyRunning }
        let observation = MainLoopObservation(frameTickInterval: settings.frameRate?.frameInterval)
        let frameRate = settings.frameRate.map { FrameRateWatch(ring: FrameTickTimer.ring, configuration: $0) }
        let watcher = Watcher(
            board: ActivityBoard.shared, settings: settings, sink: sink, observation: observation, frames: frameRate)
        watcher.start()
        // The last second of busy periods (and of frame rates) would be lost at exit: send them from an exit
        // handler too.
        finalReport = {
            watcher.reportBusyPeriods(now: sw_agent_now_ns(), force: true)
            if let frameRate { for event in frameRate.finish() { sink.frameRate(event) } }
        }
        if !exitHandlerInstalled {
            exitHandlerInstalled = true
            atexit { StallMonitor.finalReport?() }
        }
        let monitor = StallMonitor(watcher: watcher, observation: observation, sink: sink, frameRate: frameRate)
        running = monitor
        return monitor
    }
}

/// Library mode: captures and symbolicates in-process, hands finished reports to the app's handler.
final class HandlerSink: StallSink {
    private let settings: WatchSettings
    private let handler: @Sendable (StallReport) -> Void
    // In-process: the toolchain's symbolicator only, never a helper process forked from the app.
    private let symbolicator = Symbolicator()
    private var pending: StallAssembler?
    private var schedule = SampleSchedule(maxSamples: 1)
    private var moment = 0
    private var images: ProcessImages?

    init(settings: WatchSettings, handler: @escaping @Sendable (StallReport) -> Void) {
        self.settings = settings
        self.handler = handler
    }

    func watchingStarted(strategy: WatchStrategy) {}

    func busyPeriods(_ histogram: LatencyHistogram) {}

    /// The library API has no frame-rate handler (yet): `--fps` is a `stallwatch run` feature.
    func frameRate(_ event: FrameRateMonitor.Event) {}

    func stallBegan(_ onset: StallOnset, thread: Int32?) {
        let pid = getpid()
        let tid = thread ?? pid
        images = ProcessImages.captureCurrentProcess()
        var stall = StallAssembler(
            onset: onset, pid: pid, tid: tid, processName: ProcessInfo.processInfo.processName, settings: settings,
            captureMethod: .signal)
        stall.startCPUClock(cpu: ThreadInspector.cpuTime(pid: pid, tid: tid), now: sw_agent_now_ns())
        pending = stall
        schedule = SampleSchedule(maxSamples: settings.maxSamples)
        moment = 0
        _ = schedule.shouldSample(atMoment: moment)
        takeSample()
    }

    func stallContinues(_ onset: StallOnset, thread: Int32?) {
        guard let stall = pending, stall.identifier == onset.identifier else { return }
        moment += 1
        guard schedule.shouldSample(atMoment: moment) else { return }
        takeSample()
    }

    private func takeSample() {
        guard var stall = pending, let images else { return }
        let tid = stall.report.tid
        stall.noteState(ThreadInspector.state(pid: stall.report.pid, tid: tid))
        let capture = InProcessCapture.capture(tid: tid, maxFrames: settings.inProcessMaxFrames)
        if capture.addresses.isEmpty {
            stall.noteCaptureFailure(capture.error)
        } else {
            let native = symbolicator.symbolicate(capture.addresses, images: images)
            // The thread runs again: its task's async callers are read from the heap now, through reads that fail
            // rather than fault.
            let named = AsyncCallers.splice(
                into: native, hints: capture.asyncHints, images: images, memory: ProcessMemory.current,
                symbolicator: symbolicator)
            // The in-process capture stops at the limit: what lies beyond is not known.
            let truncation =
                capture.addresses.count >= settings.inProcessMaxFrames
                ? StackTruncation(
                    omittedFrames: nil, resumesAt: named.frames.count, maxFrames: settings.inProcessMaxFrames)
                : nil
            stall.add(
                frames: named.frames, capturedAt: capture.capturedAt, stoppedNanoseconds: capture.stoppedNanoseconds,
                truncation: truncation)
            stall.noteStackProblem(named.error)
        }
        pending = stall
    }

    func stallEnded(_ onset: StallOnset, endedAt: UInt64) {
        guard var stall = pending, stall.identifier == onset.identifier else { return }
        stall.end(at: endedAt)
        pending = nil
        deliver(stall)
    }

    /// Reports a stall still in progress when the monitor stops.
    func flushUnfinished() {
        // Still outside its loop: the program left it for good (see `StallReport.isOutsideLoop`).
        if let stall = pending, !stall.report.isOutsideLoop {
            pending = nil
            deliver(stall)
        }
        pending = nil
    }

    private func deliver(_ stall: StallAssembler) {
        let report = stall.report
        handler(
            stall.finished(cpuNow: ThreadInspector.cpuTime(pid: report.pid, tid: report.tid), now: sw_agent_now_ns()))
    }
}
