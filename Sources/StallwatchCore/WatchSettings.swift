// What counts as a stall and how it is watched: defined once, with its defaults, limits and encodings, for the
// command line, the agent's environment, the attach request and the library's configuration.
import CStallwatchLoopModel

/// How the agent detects stalls (`--strategy`).
public enum WatchStrategy: String, CaseIterable, Codable, Sendable {
    /// Observe the main run loop only.
    case runLoop = "runloop"
    /// Ping the main dispatch queue only.
    case ping
    /// The run loop; pings for a program that has none.
    case auto
}

/// Where the transitions of a thread's event loop come from (`--source`).
public enum LoopSource: String, CaseIterable, Codable, Sendable {
    /// The agent for run loops it can watch; the kernel trace for other event-loop threads where tracing is
    /// permitted, else `/proc` sampling.
    case auto
    /// The agent only: threads it cannot watch are not watched.
    case agent
    /// The kernel's trace of each thread's loop waits (BPF; root or CAP_BPF and CAP_PERFMON): exact, for any
    /// program; an error where it is not permitted.
    case kernel
    /// `/proc` sampling every threshold: times known to one threshold.
    case proc
}

/// The detection settings every way of watching shares.
public struct WatchSettings: Equatable, Sendable {
    /// The shortest watcher timeout: shorter ones would mostly measure scheduler noise.
    public static let thresholdRange: ClosedRange<UInt64> = 1_000_000...3_600_000_000_000
    /// Consecutive busy timeouts that make a stall.
    public static let countRange: ClosedRange<Int> = 1...100
    /// Stacks per stall.
    public static let maxSamplesRange: ClosedRange<Int> = 1...1000
    /// Frames kept per stack: enough to show where and which thread, few enough to keep the stop short.
    public static let maxFramesRange: ClosedRange<Int> = 16...4096
    /// `--fps-max-frame`: above one 60 Hz frame, and short of absurd.
    public static let fpsMaxFrameRange: ClosedRange<UInt64> = 17_000_000...10_000_000_000
    /// `--fps-dump`.
    public static let fpsDumpRange: ClosedRange<UInt64> = 50_000_000...10_000_000_000
    /// `--fps-pow`.
    public static let fpsPowRange: ClosedRange<Double> = 1...10

    /// The watcher's timeout, nanoseconds (`--threshold`; 80 ms).
    public var thresholdNanoseconds: UInt64
    /// Consecutive busy timeouts that make a stall (`--count`; 3).
    public var count: Int
    /// Stacks per stall: one at detection, then one per threshold while it lasts (`--max-samples`; 10).
    public var maxSamples: Int
    /// Frames kept per stack, innermost and outermost, of a deeper one (`--max-frames`; 256).
    public var maxFrames = 256
    /// The most frames an in-process capture (the agent's, with a signal) keeps: its stack must fit one message to the
    /// collector beside the image map. Its stacks keep the innermost frames only. The C capture's own limit (the loop
    /// model's `SW_IN_PROCESS_MAX_FRAMES`).
    public static var inProcessFrameLimit: Int { Int(SW_IN_PROCESS_MAX_FRAMES) }

    /// Frames an in-process capture keeps under these settings.
    public var inProcessMaxFrames: Int { min(maxFrames, Self.inProcessFrameLimit) }
    /// How the agent watches (`--strategy`; `auto`).
    public var strategy: WatchStrategy
    /// `--fps`: the frame tick's settings; nil runs no frame tick.
    public var frameRate: FrameRateMonitor.Configuration?
    /// `--thread`: which threads' event loops to watch (the main thread's by default).
    public var threads: [ThreadSelector] = [.main]
    /// `--source`: where the threads stallwatch watches from outside get their loop transitions.
    public var source: LoopSource = .auto
    /// `--rate-limit`: full reports per fingerprint and window; nil reports every stall in full. Applied where stacks
    /// are named (the collector, library mode's sink), never handed to a preloaded agent.
    public var rateLimit: RateLimit?

    public init(
        thresholdNanoseconds: UInt64 = 80_000_000, count: Int = 3, maxSamples: Int = 10,
        strategy: WatchStrategy = .auto, frameRate: FrameRateMonitor.Configuration? = nil
    ) {
        self.thresholdNanoseconds = thresholdNanoseconds
        self.count = count
        self.maxSamples = maxSamples
        self.strategy = strategy
        self.frameRate = frameRate
    }

    /// What the agent cannot watch with, in a sentence; nil when every setting is acceptable.
    ///
    /// The command line keeps the threshold within ``thresholdRange``; the agent (and library mode) only needs it
    /// positive.
    public var invalidSetting: String? {
        if thresholdNanoseconds == 0 { return "threshold must be positive" }
        if !Self.countRange.contains(count) { return "count must be between 1 and 100" }
        if !Self.maxSamplesRange.contains(maxSamples) { return "maxSamples must be between 1 and 1000" }
        if let reason = rateLimit?.invalidReason { return "rateLimit: \(reason)" }
        return nil
    }

    // MARK: The agent's environment

    /// The settings as `stallwatch run` hands them to the preloaded agent; a nil value removes a variable the user's
    /// environment may have set (no frame tick without `--fps`).
    public var environment: [String: String?] {
        var variables: [String: String?] = [
            AgentEnvironment.thresholdNanoseconds: String(thresholdNanoseconds),
            AgentEnvironment.count: String(count),
            AgentEnvironment.maxSamples: String(maxSamples),
            AgentEnvironment.maxFrames: String(maxFrames),
            AgentEnvironment.strategy: strategy.rawValue,
            AgentEnvironment.threads: threads.isMainOnly ? nil : threads.encoded,
        ]
        for name in FrameRateMonitor.Configuration.environmentNames { variables[name] = .some(nil) }
        for (name, value) in frameRate?.environment ?? [:] { variables[name] = value }
        return variables
    }

    /// The settings in a workload's environment, defaults for what is missing.
    ///
    /// A sample limit out of range is brought into range; a threshold or count out of range is kept, for
    /// ``invalidSetting`` to name: the agent refuses to watch with them rather than guess.
    public init(environment: [String: String]) {
        self.init()
        if let threshold = environment[AgentEnvironment.thresholdNanoseconds].flatMap(UInt64.init) {
            thresholdNanoseconds = threshold
        }
        if let count = environment[AgentEnvironment.count].flatMap(Int.init) { self.count = count }
        if let samples = environment[AgentEnvironment.maxSamples].flatMap(Int.init) {
            maxSamples = min(max(samples, Self.maxSamplesRange.lowerBound), Self.maxSamplesRange.upperBound)
        }
        if let frames = environment[AgentEnvironment.maxFrames].flatMap(Int.init) {
            maxFrames = min(max(frames, Self.maxFramesRange.lowerBound), Self.maxFramesRange.upperBound)
        }
        strategy = environment[AgentEnvironment.strategy].flatMap(WatchStrategy.init) ?? .auto
        frameRate = FrameRateMonitor.Configuration(environment: environment)
        threads = environment[AgentEnvironment.threads].map { [ThreadSelector](encoded: $0) } ?? [.main]
    }
}

extension AttachRequest {
    /// A request carrying `settings` (the attach protocol has no strategy or frame tick: the agent picks its own).
    public init(settings: WatchSettings, collectorVersion: String) {
        self.init(
            thresholdNanoseconds: settings.thresholdNanoseconds, count: settings.count,
            maxSamples: settings.maxSamples, collectorVersion: collectorVersion,
            threads: settings.threads.isMainOnly ? nil : settings.threads.encoded)
    }

    /// The detection settings the collector asked for.
    public var settings: WatchSettings {
        var settings = WatchSettings(thresholdNanoseconds: thresholdNanoseconds, count: count, maxSamples: maxSamples)
        if let threads { settings.threads = [ThreadSelector](encoded: threads) }
        return settings
    }
}
