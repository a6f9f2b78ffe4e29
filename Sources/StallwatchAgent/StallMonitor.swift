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
        /// Which threads' run loops to watch, as `--thread` says it: `.main` (the default), `.all`, names or tids.
        /// A thread other than the main one is watched from its first run of its run loop after ``start(_:handler:)``,
        /// found through the agent's `CFRunLoopRunSpecific`, which needs to come before libFoundation's in the
        /// loader's search order (see docs/how-it-works.md); in library mode only run loops are watched (an epoll
        /// loop of its own is watched from outside, by `stallwatch run` or `attach`).
        public var threads: [ThreadSelector]

        public init(
            threshold: Duration = .nanoseconds(Int64(WatchSettings().thresholdNanoseconds)),
            count: Int = WatchSettings().count, maxSamples: Int = WatchSettings().maxSamples,
            strategy: WatchStrategy = .auto, threads: [ThreadSelector] = [.main]
        ) {
            self.threshold = threshold
            self.count = count
            self.maxSamples = maxSamples
            self.strategy = strategy
            self.threads = threads
        }

        /// The same settings as `stallwatch run` takes; nil when the threshold is not positive or longer than a
        /// year. `STALLWATCH_STRATEGY` in the environment chooses the strategy, as under `stallwatch run`.
        var settings: WatchSettings? {
            guard threshold > .zero, threshold < .seconds(365 * 86_400) else { return nil }
            let environment = ProcessInfo.processInfo.environment
            var settings = WatchSettings(
                thresholdNanoseconds: threshold.nanoseconds, count: count, maxSamples: maxSamples,
                strategy: environment[AgentEnvironment.strategy].flatMap(WatchStrategy.init) ?? strategy)
            settings.threads = threads.isEmpty ? [.main] : threads
            return settings
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
        guard let settings = configuration.settings else { throw .invalidConfiguration("threshold must be positive") }
        if let invalid = settings.invalidSetting { throw .invalidConfiguration(invalid) }
        return try start(settings: settings, sink: HandlerSink(settings: settings, handler: handler))
    }

    /// Stops watching. A stall in progress is reported as unfinished.
    public func stop() {
        Self.lock.lock()
        defer { Self.lock.unlock() }
        guard Self.running === self else { return }
        RunLoopObservers.remove(observers)
        LoopThreads.stop()
        if let frameTick { FrameTickTimer.remove(frameTick.timer) }
        watcher.stop()
        if let frameTick { for event in frameTick.watch.finish() { sink.frameRate(event) } }
        Self.finalReport = nil
        (sink as? HandlerSink)?.flushUnfinished()
        Self.running = nil
    }

    /// Starts the watcher with `settings` (their `frameRate` runs the frame tick), reporting to `sink`.
    static func start(settings: WatchSettings, sink: StallSink) throws(StartError) -> StallMonitor {
        lock.lock()
        defer { lock.unlock() }
        guard running == nil else { throw .alreadyRunning }
        let observers = RunLoopObservers.install()
        let frameTick = settings.frameRate.flatMap { configuration in
            FrameTickTimer.install(interval: configuration.frameInterval).map { timer in
                (timer: timer, watch: FrameRateWatch(ring: FrameTickTimer.ring, configuration: configuration))
            }
        }
        let watcher = Watcher(
            board: ActivityBoard.shared, settings: settings, sink: sink, modeTracker: ModeTracker(observers: observers),
            frames: frameTick?.watch)
        watcher.start()
        LoopThreads.watch(settings.threads)
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
}

/// Library mode: captures and symbolicates in-process, hands finished reports to the app's handler.
final class HandlerSink: StallSink {
    /// One stall between its detection and its end, and its sampling.
    private struct Open {
        var assembler: StallAssembler
        var schedule: SampleSchedule
        var moment = 0
        let images: ProcessImages
    }

    private let settings: WatchSettings
    private let handler: @Sendable (StallReport) -> Void
    // In-process: the toolchain's symbolicator only, never a helper process forked from the app.
    private let symbolicator = Symbolicator()
    /// The open stalls by identifier: several loops (`threads`) may be stalled at once.
    private var open: [Int: Open] = [:]

    init(settings: WatchSettings, handler: @escaping @Sendable (StallReport) -> Void) {
        self.settings = settings
        self.handler = handler
    }

    func watchingStarted(strategy: WatchStrategy) {}

    func loopThreadWatched(tid: Int32) {}

    func busyPeriods(_ histogram: LatencyHistogram) {}

    /// The library API has no frame-rate handler (yet): `--fps` is a `stallwatch run` feature.
    func frameRate(_ event: FrameRateMonitor.Event) {}

    func stallBegan(_ onset: StallOnset, thread: Int32?) {
        let pid = getpid()
        let tid = thread ?? pid
        // The main loop is always observed; its stalls count only if `threads` picks the main thread.
        let loopThread = onset.phase == .mainQueue ? pid : tid
        guard settings.threads.matches(tid: loopThread, name: ThreadInspector.name(pid: pid, tid: loopThread), pid: pid)
        else { return }
        var assembler = StallAssembler(
            onset: onset, pid: pid, tid: tid, processName: ProcessInfo.processInfo.processName, settings: settings,
            captureMethod: .signal, threadName: tid == pid ? nil : ThreadInspector.name(pid: pid, tid: tid))
        assembler.startCPUClock(cpu: ThreadInspector.cpuTime(pid: pid, tid: tid), now: sw_agent_now_ns())
        var schedule = SampleSchedule(maxSamples: settings.maxSamples)
        _ = schedule.shouldSample(atMoment: 0)
        open[onset.identifier] = Open(
            assembler: assembler, schedule: schedule, images: ProcessImages.captureCurrentProcess())
        takeSample(onset.identifier)
    }

    func stallContinues(_ onset: StallOnset, thread: Int32?) {
        guard var stall = open[onset.identifier] else { return }
        stall.moment += 1
        let due = stall.schedule.shouldSample(atMoment: stall.moment)
        open[onset.identifier] = stall
        if due { takeSample(onset.identifier) }
    }

    private func takeSample(_ identifier: Int) {
        guard var stall = open[identifier] else { return }
        let tid = stall.assembler.report.tid
        stall.assembler.noteState(ThreadInspector.state(pid: stall.assembler.report.pid, tid: tid))
        let capture = InProcessCapture.capture(tid: tid)
        if capture.addresses.isEmpty {
            stall.assembler.noteCaptureFailure(capture.error)
        } else {
            stall.assembler.add(
                frames: symbolicator.symbolicate(capture.addresses, images: stall.images),
                capturedAt: capture.capturedAt, stoppedNanoseconds: capture.stoppedNanoseconds)
        }
        open[identifier] = stall
    }

    func stallEnded(_ onset: StallOnset, endedAt: UInt64) {
        guard var stall = open.removeValue(forKey: onset.identifier) else { return }
        stall.assembler.end(at: endedAt)
        deliver(stall.assembler)
    }

    /// Reports the stalls still in progress when the monitor stops.
    func flushUnfinished() {
        let unfinished = open.values.map(\.assembler).sorted { $0.identifier < $1.identifier }
        open.removeAll()
        // Still outside its loop: the program left it for good (see `StallReport.isOutsideLoop`).
        for stall in unfinished where !stall.report.isOutsideLoop { deliver(stall) }
    }

    private func deliver(_ stall: StallAssembler) {
        let report = stall.report
        handler(
            stall.finished(cpuNow: ThreadInspector.cpuTime(pid: report.pid, tid: report.tid), now: sw_agent_now_ns()))
    }
}
