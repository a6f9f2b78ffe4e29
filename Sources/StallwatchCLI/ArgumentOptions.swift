// The option values `run`, `demo`, `attach` and `stack` accept, with their defaults and limits.
import StallwatchCore

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

/// How the agent detects stalls (`--strategy`).
public enum WatchStrategy: String, CaseIterable, Sendable {
    /// Observe the main run loop only.
    case runLoop = "runloop"
    /// Ping the main dispatch queue only.
    case ping
    /// The run loop; pings for a program that has none.
    case auto
}

/// Options shared by `run`, `demo` and `attach`: what counts as a stall and where reports go.
public struct WatchOptions: Equatable, Sendable {
    /// The smallest `--threshold` accepted; shorter timeouts would mostly measure scheduler noise.
    public static let minimumThreshold: Duration = .milliseconds(1)
    /// The accepted range of `--count`.
    public static let countRange: ClosedRange<Int> = 1...100
    /// The accepted range of `--max-samples`.
    public static let maxSamplesRange: ClosedRange<Int> = 1...1000
    /// The accepted range of `--fps-max-frame`: above one 60 Hz frame, and short of absurd.
    public static let fpsMaxFrameRange: ClosedRange<Duration> = .milliseconds(17) ... .seconds(10)
    /// The accepted range of `--fps-dump`.
    public static let fpsDumpRange: ClosedRange<Duration> = .milliseconds(50) ... .seconds(10)
    /// The accepted range of `--fps-pow`.
    public static let fpsPowRange: ClosedRange<Double> = 1...10
    /// The `--output` value that means standard output.
    public static let standardOutputPath = "-"

    /// How long one watcher timeout lasts (`--threshold DURATION`).
    public var threshold: Duration
    /// How many consecutive busy timeouts make a stall (`--count N`).
    public var count: Int
    /// How many stacks to capture per stall (`--max-samples N`).
    public var maxSamples: Int
    /// The report format (`--format text|json`).
    public var format: OutputFormat
    /// Where reports go (`--output FILE`); `nil` or `"-"` means standard output.
    public var output: String?
    /// Whether text reports use colour (`--color auto|always|never`).
    public var color: ColorChoice
    /// How the agent watches (`--strategy`).
    public var strategy: WatchStrategy = .auto
    /// `--fps` (and `--fps-max-frame`, `--fps-pow`): the frame tick's settings; nil without `--fps`.
    public var frameRate: FrameRateMonitor.Configuration?
    /// `--fail-on-stall`, `--max-stall`, `--max-stalls`, `--max-total`.
    public var budget = StallBudget()
    /// `--timeout`: how long the workload may run.
    public var timeout: Duration?
    /// `--junit FILE`.
    public var junit: String?
    /// `--baseline FILE`.
    public var baseline: String?

    /// Creates watch options; the defaults are those of a command line without options.
    public init(
        threshold: Duration = .milliseconds(80),
        count: Int = 3,
        maxSamples: Int = 10,
        format: OutputFormat = .text,
        output: String? = nil,
        color: ColorChoice = .auto
    ) {
        self.threshold = threshold
        self.count = count
        self.maxSamples = maxSamples
        self.format = format
        self.output = output
        self.color = color
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

/// The stalls the demo workload knows how to cause (`stallwatch demo --scenario NAME`).
public enum DemoScenario: String, CaseIterable, Sendable {
    case cpu
    case sleep
    case mainQueue = "main-queue"
    case source
    case mutex
    case vdso
    case observer
    case twoPhase = "two-phase"
    case modal
    case modalStall = "modal-stall"
    case dispatchMain = "dispatch-main"
    case hiccups
    case baseline

    /// One line saying what the scenario does, as `stallwatch demo --help` lists it.
    public var summary: String {
        switch self {
        case .cpu: "CPU-bound work in a timer callback."
        case .sleep: "Blocking usleep in a timer callback."
        case .mainQueue: "CPU work in a DispatchQueue.main block."
        case .source: "CPU work in a version-0 run-loop source."
        case .mutex: "Main thread blocked on a lock another thread holds."
        case .vdso: "Spinning on clock_gettime, in the vDSO."
        case .observer: "CPU work inside a beforeWaiting observer."
        case .twoPhase: "One step for 5/6 of a stall, another for 1/6."
        case .modal: "A responsive nested loop in a private mode."
        case .modalStall: "CPU work in a timer inside such a modal session."
        case .dispatchMain: "No run loop (dispatchMain); CPU work in a block."
        case .hiccups: "150 ms of CPU every 250 ms: janky, no stall."
        case .baseline: "Short work only; no stall expected."
        }
    }
}

/// How `stallwatch attach` watches a process (`--mode`).
public enum AttachMode: String, CaseIterable, Sendable {
    /// Through the process's listening agent if it has one, otherwise from outside.
    case auto
    /// Only through the process's listening agent; an error if none answers.
    case agent
    /// From outside only, from `/proc` and ptrace, whether or not an agent is there.
    case external
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

    /// Creates stack options.
    public init(pid: Int32, allThreads: Bool = false, format: OutputFormat = .text) {
        self.pid = pid
        self.allThreads = allThreads
        self.format = format
    }
}
