// What `stallwatch attach` adds to the records of `stallwatch run`: how the process was watched, and how the watch
// ended.

/// How `stallwatch attach` watched a process.
public enum WatchMode: String, Sendable, Equatable {
    /// Through the agent listening in the process: run-loop transitions, timed exactly, as under `run`.
    case agent
    /// From outside: the main thread's state sampled from `/proc` every threshold; times known to one sample.
    case external
    /// From outside, through the kernel's trace of the thread's event-loop waits: timed exactly, with no run-loop
    /// phase or callout known.
    case kernel

    /// Whether the run loop's phase and callout are known (only the agent sees inside the loop).
    public var knowsLoopPhase: Bool { self == .agent }
}

/// Why an attach session ended.
public enum AttachEnding: Sendable, Equatable {
    /// `--duration` elapsed.
    case duration
    /// stallwatch received this signal (Ctrl-C is SIGINT).
    case signal(Int32)
    /// The watched process exited.
    case exited
    /// The process's agent closed the connection while the process went on.
    case agentDisconnected

    /// The `ended` value of the JSON summary.
    public var name: String {
        switch self {
        case .duration: "duration"
        case .signal: "signal"
        case .exited: "exited"
        case .agentDisconnected: "agentDisconnected"
        }
    }
}

/// How an attached process's stall was seen (nil under `stallwatch run`).
public struct AttachedStall: Equatable, Sendable {
    public var mode: WatchMode
    /// External mode's sampling interval (the threshold): start and end are each known to half of it.
    public var resolutionNanoseconds: UInt64?
    /// The main thread was already busy at stallwatch's first look (external mode), so the stall's start is that
    /// look, not its real start.
    public var startedBeforeAttach: Bool

    public init(mode: WatchMode, resolutionNanoseconds: UInt64?, startedBeforeAttach: Bool = false) {
        self.mode = mode
        self.resolutionNanoseconds = mode == .external ? resolutionNanoseconds : nil
        self.startedBeforeAttach = startedBeforeAttach
    }
}

/// How an attach session went (nil under `stallwatch run`).
public struct AttachOutcome: Equatable, Sendable {
    public var mode: WatchMode
    public var pid: Int32
    public var processName: String
    public var ending: AttachEnding

    public init(mode: WatchMode, pid: Int32, processName: String, ending: AttachEnding) {
        self.mode = mode
        self.pid = pid
        self.processName = processName
        self.ending = ending
    }
}
