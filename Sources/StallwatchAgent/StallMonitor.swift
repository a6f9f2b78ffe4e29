// The agent's public API: start and stop watching the main run loop from inside the program.
import CStallwatchAgentSupport
import CoreFoundation
import Foundation
import StallwatchCore
import StallwatchImages

/// Watches the main run loop of the current process and reports its stalls.
///
/// `stallwatch run` injects this agent with `LD_PRELOAD` and needs no code in the program. A program can
/// also link it (the `StallwatchAgent` library product) and start it itself:
///
/// ```swift
/// let monitor = try StallMonitor.start(.init(threshold: .milliseconds(80))) { report in
///     print("main thread stalled for \((report.duration ?? 0) / 1_000_000) ms in \(report.culprit?.symbol ?? "?")")
/// }
/// ```
///
/// Started that way, each stack is captured by a helper process, the `stallwatch` executable in a hidden role,
/// which stops the stalled thread with ptrace for a fraction of a millisecond and names its frames (file, line and
/// inlined frames) in its own process, exactly as `stallwatch run` does: the app's sleeps, polls and reads are not
/// interrupted, and the app never reads debug information. The helper is started once, when watching begins, dies
/// with the app, and is found as ``Configuration/helperPath`` says. When it cannot be found, started or allowed to
/// trace the app, the monitor captures with a signal instead (which can cut a blocking call on the stalled thread
/// short) and each report's ``StallReport/captureNote`` says why.
///
/// In a program that runs set-user-ID, set-group-ID or with file capabilities, whose environment its less privileged
/// caller chose, the monitor reads no `STALLWATCH_*` variable and starts no helper: it reports stalls without stacks,
/// and each report's note says so (``Configuration/usesHelper`` false still captures with a signal, as the app's own
/// code chose).
///
/// ## Threading
///
/// The handler runs on the monitor's own thread (named `stallwatch`), once per stall, when the stall has ended and
/// its stacks are in (the helper's answers are awaited without holding the watch up, each for at most its deadline);
/// a stall still going on when the monitor stops is handed over from ``stop()``, on the caller's thread. While the handler
/// runs, the next stall is not watched: hand slow work (uploading a report) to another queue. ``stop()`` may be
/// called from any thread, the handler's included, any number of times; do not start a monitor from the handler.
/// With ``start(_:detected:ended:)`` the app is also told of each stall at its detection, once its first stack is in,
/// on the same thread.
public final class StallMonitor: @unchecked Sendable {
    /// How the monitor detects stalls and takes their stacks.
    public struct Configuration: Sendable {
        /// The watcher's timeout; ``count`` consecutive busy timeouts make a stall.
        public var threshold: Duration
        /// Consecutive busy timeouts that make a stall, 1 to 100.
        public var count: Int
        /// Stacks per stall: one at detection, then one per threshold while it lasts (1 to 1000); beyond it,
        /// every other one is dropped so that the samples span the whole stall.
        public var maxSamples: Int
        /// Observe the run loop, ping the main queue, or the run loop and pings for a program that has none.
        public var strategy: WatchStrategy
        /// The capture helper: the `stallwatch` executable built from the same package as the agent. When nil,
        /// the path in `STALLWATCH_HELPER` is used, else `stallwatch` beside the agent library
        /// (`libStallwatchAgent.so`), else beside the app's executable.
        public var helperPath: String?
        /// Whether stacks are captured by the helper process (the default); false captures with a signal.
        public var usesHelper: Bool
        /// Which threads' run loops to watch, as `--thread` says it: `.main` (the default), `.all`, names or tids.
        /// A thread other than the main one is watched from its first run of its run loop after ``start(_:handler:)``,
        /// found through the agent's `CFRunLoopRunSpecific`, which needs to come before libFoundation's in the
        /// loader's search order (see docs/how-it-works.md); in library mode only run loops are watched (an epoll
        /// loop of its own is watched from outside, by `stallwatch run` or `attach`).
        public var threads: [ThreadSelector]
        /// Full reports per fingerprint and window (``RateLimit/libraryDefault``, 5 per 10 minutes); nil reports every
        /// stall in full. A stall over the limit takes only the sample that names its fingerprint and reaches the
        /// handler with ``StallReport/suppressed`` set and that one sample. `STALLWATCH_RATE_LIMIT` in the environment
        /// (`N/DURATION`, such as `2/1h`, or `off`) takes precedence.
        public var rateLimit: RateLimit?

        public init(
            threshold: Duration = .nanoseconds(Int64(WatchSettings().thresholdNanoseconds)),
            count: Int = WatchSettings().count, maxSamples: Int = WatchSettings().maxSamples,
            strategy: WatchStrategy = .auto, threads: [ThreadSelector] = [.main], helperPath: String? = nil,
            usesHelper: Bool = true, rateLimit: RateLimit? = .libraryDefault
        ) {
            self.threshold = threshold
            self.count = count
            self.maxSamples = maxSamples
            self.strategy = strategy
            self.threads = threads
            self.helperPath = helperPath
            self.usesHelper = usesHelper
            self.rateLimit = rateLimit
        }

        /// The same settings as `stallwatch run` takes; nil when the threshold is not positive or longer than a
        /// year. `STALLWATCH_STRATEGY` in the environment chooses the strategy, as under `stallwatch run` (not in a
        /// set-user-ID program: ``AgentEnvironment/current``).
        var settings: WatchSettings? {
            guard threshold > .zero, threshold < .seconds(365 * 86_400) else { return nil }
            let environment = AgentEnvironment.current
            var settings = WatchSettings(
                thresholdNanoseconds: threshold.nanoseconds, count: count, maxSamples: maxSamples,
                strategy: environment[AgentEnvironment.strategy].flatMap(WatchStrategy.init) ?? strategy)
            settings.threads = threads.isEmpty ? [.main] : threads
            settings.rateLimit = rateLimit
            return settings
        }

        /// ``settings`` with `STALLWATCH_RATE_LIMIT` applied; a value that is neither `off` nor a limit is refused.
        func settings(environment: [String: String]) throws(StartError) -> WatchSettings {
            guard var settings else { throw .invalidConfiguration("threshold must be positive") }
            if let text = environment[AgentEnvironment.rateLimit] {
                switch RateLimit.parseSetting(text) {
                case .success(let limit): settings.rateLimit = limit
                case .failure(let failure):
                    throw .invalidConfiguration("\(AgentEnvironment.rateLimit)='\(text)': \(failure)")
                }
            }
            return settings
        }
    }

    /// Why ``start(_:handler:)`` did not start a monitor.
    public enum StartError: Error, CustomStringConvertible, Sendable, Equatable {
        /// A setting is out of range; the text names it.
        case invalidConfiguration(String)
        /// A monitor (started by the app, or by `stallwatch run`'s agent) already watches this process: stop it
        /// first.
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
    /// Around ``start(_:handler:)`` and ``stop()``: `sw_agent_monitor_lock`, recursive (a handler called from
    /// ``stop()`` may call it again) and new in a child of `fork()`.
    private static func withLock<Result, Failure>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        sw_agent_monitor_lock()
        defer { sw_agent_monitor_unlock() }
        return try body()
    }

    /// The process that started the monitor: in a child of `fork()` its threads and its helper are not there.
    private let pid = getpid()
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

    /// Starts watching the main run loop, with `handler` receiving each stall when it ends.
    ///
    /// - Parameters:
    ///   - configuration: Detection and capture settings.
    ///   - handler: Called on the monitor's thread with each finished stall (see the threading notes above).
    /// - Returns: The running monitor; keep it to ``stop()`` it.
    /// - Throws: ``StartError/alreadyRunning`` if a monitor already runs in this process,
    ///   ``StartError/invalidConfiguration(_:)`` for a setting out of range or a `STALLWATCH_RATE_LIMIT` that is not
    ///   one.
    public static func start(
        _ configuration: Configuration = Configuration(), handler: @escaping @Sendable (StallReport) -> Void
    ) throws(StartError) -> StallMonitor {
        try start(configuration, detected: { _ in }, ended: handler)
    }

    /// Starts watching, with each stall told of twice, as `stallwatch run` writes a `stall-detected` record, then a
    /// `stall` record: when it is detected, once its first stack is in, and when it ends.
    ///
    /// A service that deadlocks never ends its stall: `detected` is how it is seen. A stall of a thread outside its
    /// loop (which may prove no stall, see ``StallReport``) reaches only `ended`.
    ///
    /// - Parameters:
    ///   - configuration: Detection and capture settings.
    ///   - detected: Called with the stall's report so far (`end` nil, its first stack), on the monitor's thread.
    ///   - ended: Called with the whole report when the stall ends (or the monitor stops during it: `end` nil), on
    ///     the monitor's thread, as ``start(_:handler:)``'s handler is.
    /// - Returns: The running monitor; keep it to ``stop()`` it.
    /// - Throws: as ``start(_:handler:)``.
    public static func start(
        _ configuration: Configuration = Configuration(), detected: @escaping @Sendable (StallReport) -> Void,
        ended: @escaping @Sendable (StallReport) -> Void
    ) throws(StartError) -> StallMonitor {
        let settings = try configuration.settings(environment: AgentEnvironment.current)
        if let invalid = settings.invalidSetting { throw .invalidConfiguration(invalid) }
        let capture: LibraryCapture =
            if AgentEnvironment.isSecureExecution && configuration.usesHelper {
                .none(reason: AgentEnvironment.secureExecutionNote)
            } else if configuration.usesHelper {
                .helper(CaptureHelperClient(configuredPath: configuration.helperPath))
            } else {
                .signal
            }
        // Checked before the port is taken: a second monitor must not say the first one's port is in use.
        if withLock({ running.map { $0.pid == getpid() } ?? false }) { throw .alreadyRunning }
        let metrics = LibraryMetrics.start(AgentEnvironment.current[AgentEnvironment.metrics])
        do {
            return try start(
                settings: settings,
                sink: HandlerSink(
                    settings: settings, capture: capture, metrics: metrics, detected: detected, ended: ended))
        } catch {
            metrics?.stop()
            throw error
        }
    }

    /// Stops watching and ends the capture helper. A stall in progress is reported as unfinished.
    ///
    /// Safe from any thread and idempotent. Called from the handler, it returns at once and the monitor stops
    /// when the handler returns (the monitor's thread cannot wait for itself). In a child of `fork()`, which has
    /// neither the monitor's thread nor its helper, it only forgets the parent's monitor and returns at once; the
    /// parent's watch goes on.
    public func stop() {
        if let sink = sink as? HandlerSink, sink.watcherThread == sw_agent_gettid() {
            Thread.detachNewThread { self.stop() }
            return
        }
        Self.withLock {
            guard Self.running === self else { return }
            // First, so that a stop() from the handler called below returns at once.
            Self.running = nil
            guard pid == getpid() else { return forgetInForkedChild() }
            stopWatching()
        }
    }

    private func stopWatching() {
        observation.detach()
        LoopThreads.stop()
        ExecutorThreads.stop()
        watcher.stop()
        if let frameRate { for event in frameRate.finish() { sink.frameRate(event) } }
        Self.finalReport = nil
        (sink as? HandlerSink)?.finish()
    }

    /// In a child of `fork()`: the parent's monitor is let go without touching what is the parent's (its watcher
    /// thread is not in the child, its helper is the parent's child, its open stalls are the parent's) and without a
    /// lock another thread of the parent may have held at the fork (the observation's, the run loop's): the copied
    /// observers stay and go on publishing to the one main-loop board, which a new monitor of the child reads.
    private func forgetInForkedChild() {
        Self.finalReport = nil
        (sink as? HandlerSink)?.abandonAfterFork()
    }

    /// Starts the watcher with `settings` (their `frameRate` runs the frame tick), reporting to `sink`.
    static func start(settings: WatchSettings, sink: StallSink) throws(StartError) -> StallMonitor {
        try withLock { () throws(StartError) in try startLocked(settings: settings, sink: sink) }
    }

    private static func startLocked(settings: WatchSettings, sink: StallSink) throws(StartError) -> StallMonitor {
        // A monitor inherited through fork() watches nothing in this process: the child may start its own.
        if let inherited = running, inherited.pid != getpid() {
            running = nil
            inherited.forgetInForkedChild()
        }
        guard running == nil else { throw .alreadyRunning }
        let observation = MainLoopObservation(frameTickInterval: settings.frameRate?.frameInterval)
        let frameRate = settings.frameRate.map { FrameRateWatch(ring: FrameTickTimer.ring, configuration: $0) }
        let watcher = Watcher(
            board: ActivityBoard.shared, settings: settings, sink: sink, observation: observation, frames: frameRate)
        watcher.start()
        LoopThreads.watch(settings.threads)
        ExecutorThreads.watch(settings.threads)
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
