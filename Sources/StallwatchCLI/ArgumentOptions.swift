// The option values `run`, `demo`, `attach` and `stack` accept, with their defaults and limits.
import StallwatchCollector
import StallwatchCore
import StallwatchExport
import StallwatchMetrics

/// How reports are written.
public enum OutputFormat: String, CaseIterable, Sendable {
    /// Human-readable text.
    case text
    /// One JSON object per line (NDJSON).
    case json
}

/// Whether text reports use ANSI colour.
public enum ColorChoice: String, CaseIterable, Sendable {
    /// Colour only when the report goes to a terminal and `TERM` is not `dumb`.
    case auto
    /// Always colour.
    case always
    /// Never colour.
    case never
}

/// Options shared by `run`, `demo` and `attach`: what counts as a stall and where reports go.
public struct WatchOptions: Equatable, Sendable {
    /// The `--output` value that means standard output.
    public static let standardOutputPath = "-"

    /// What counts as a stall and how it is watched (`--threshold`, `--count`, `--max-samples`, `--strategy`,
    /// `--fps`...).
    public var settings: WatchSettings
    /// The report format (`--format text|json`).
    public var format: OutputFormat
    /// Where reports go (`--output FILE`); `nil` or `"-"` means standard output.
    public var output: String?
    /// Whether text reports use colour (`--color auto|always|never`).
    public var color: ColorChoice
    /// `--fail-on-stall`, `--max-stall`, `--max-stalls`, `--max-total`.
    public var budget = StallBudget()
    /// `--timeout`: how long the workload may run.
    public var timeout: Duration?
    /// `--junit FILE`.
    public var junit: String?
    /// `--baseline FILE`.
    public var baseline: String?
    /// `--html FILE` and `--export FORMAT=FILE`: written from the run's records when it ends.
    public var exports: [ExportRequest] = []
    /// `--rotate SIZE[,KEEP]`: rotate the `--output` file by size.
    public var rotation: OutputRotation?
    /// `--metrics [HOST]:PORT`: serve Prometheus metrics there while watching.
    public var metrics: MetricsAddress?

    /// Creates watch options; the defaults are those of a command line without options.
    public init(
        threshold: Duration = .nanoseconds(Int64(WatchSettings().thresholdNanoseconds)),
        count: Int = WatchSettings().count,
        maxSamples: Int = WatchSettings().maxSamples,
        format: OutputFormat = .text,
        output: String? = nil,
        color: ColorChoice = .auto
    ) {
        settings = WatchSettings(thresholdNanoseconds: threshold.nanoseconds, count: count, maxSamples: maxSamples)
        self.format = format
        self.output = output
        self.color = color
    }

    /// How long one watcher timeout lasts (`--threshold DURATION`).
    public var threshold: Duration {
        get { .nanoseconds(Int64(settings.thresholdNanoseconds)) }
        set { settings.thresholdNanoseconds = newValue.nanoseconds }
    }
    /// How many consecutive busy timeouts make a stall (`--count N`).
    public var count: Int {
        get { settings.count }
        set { settings.count = newValue }
    }
    /// How many stacks to capture per stall (`--max-samples N`).
    public var maxSamples: Int {
        get { settings.maxSamples }
        set { settings.maxSamples = newValue }
    }
    /// How the agent watches (`--strategy`).
    public var strategy: WatchStrategy {
        get { settings.strategy }
        set { settings.strategy = newValue }
    }
    /// `--fps` (and `--fps-max-frame`, `--fps-pow`): the frame tick's settings; nil without `--fps`.
    public var frameRate: FrameRateMonitor.Configuration? {
        get { settings.frameRate }
        set { settings.frameRate = newValue }
    }

    /// Whether reports are written to stallwatch's standard output.
    public var reportsGoToStandardOutput: Bool {
        output == nil || output == Self.standardOutputPath
    }

    /// Whether the workload's standard output must be sent to stallwatch's standard error.
    ///
    /// True only when JSON reports own standard output, so `stallwatch run --format json -- CMD | jq .`
    /// stays parseable even if CMD prints. In every other case the workload's output passes through.
    public var redirectsWorkloadStandardOutput: Bool {
        reportsGoToStandardOutput && format == .json
    }
}

/// Options of `stallwatch run`.
public struct RunOptions: Equatable, Sendable {
    /// What counts as a stall and where reports go.
    public var watch: WatchOptions
    /// The program to launch followed by its arguments, exactly as given; never empty.
    public var command: [String]

    /// Creates run options.
    public init(watch: WatchOptions = WatchOptions(), command: [String]) {
        self.watch = watch
        self.command = command
    }
}

/// Options of `stallwatch demo`.
public struct DemoOptions: Equatable, Sendable {
    /// What counts as a stall and where reports go.
    public var watch: WatchOptions
    /// The scenario's name (a ``DemoScenario`` raw value), or `nil` to let the workload choose.
    public var scenario: String?
    /// Arguments given after `--`, passed to the demo workload unchanged.
    public var demoArguments: [String]

    /// Creates demo options.
    public init(watch: WatchOptions = WatchOptions(), scenario: String? = nil, demoArguments: [String] = []) {
        self.watch = watch
        self.scenario = scenario
        self.demoArguments = demoArguments
    }
}

/// Options of `stallwatch attach`.
public struct AttachOptions: Equatable, Sendable {
    /// What counts as a stall and where reports go.
    public var watch: WatchOptions
    /// The process to watch.
    public var pid: Int32
    /// Through its agent, from outside, or whichever works (`--mode`).
    public var mode: AttachMode
    /// How long to watch (`--duration`); `nil` means until Ctrl-C, SIGTERM or the process's exit.
    public var duration: Duration?

    /// Creates attach options.
    public init(watch: WatchOptions = WatchOptions(), pid: Int32, mode: AttachMode = .auto, duration: Duration? = nil) {
        self.watch = watch
        self.pid = pid
        self.mode = mode
        self.duration = duration
    }
}

/// Options of `stallwatch stack`.
public struct StackOptions: Equatable, Sendable {
    /// The process whose stacks to show.
    public var pid: Int32
    /// Every thread, not only the main one (`--all-threads`).
    public var allThreads: Bool
    /// Text for people, or one JSON object (`--format`).
    public var format: OutputFormat
    /// Frames kept per stack (`--max-frames`).
    public var maxFrames: Int

    /// Creates stack options.
    public init(
        pid: Int32, allThreads: Bool = false, format: OutputFormat = .text, maxFrames: Int = WatchSettings().maxFrames
    ) {
        self.pid = pid
        self.allThreads = allThreads
        self.format = format
        self.maxFrames = maxFrames
    }
}
