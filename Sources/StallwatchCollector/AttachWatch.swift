// `stallwatch attach`'s engine: watches a running process through its listening agent or from outside, until a
// signal, the deadline or the process's exit, and leaves it running as it was.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchMetrics

/// How `stallwatch attach` watches a process (`--mode`).
public enum AttachMode: String, CaseIterable, Sendable {
    /// Through the process's listening agent if it has one, otherwise from outside.
    case auto
    /// Only through the process's listening agent; an error if none answers.
    case agent
    /// From outside only, from `/proc` and ptrace, whether or not an agent is there.
    case external
}

/// One attach session, from the preflight to the end of the watch.
public final class AttachWatch {
    /// What the session found, for the summary.
    public struct Outcome {
        public var stalls: [StallReport]
        /// Deadlocks found at the stalls' captures, each once.
        public var deadlocks: [DeadlockReport] = []
        public var warnings: [String]
        public var watchedPids: [Int32]
        /// How the agent watched (run-loop observers, main-queue pings); empty from outside.
        public var strategies: [WatchStrategy]
        public var attached: AttachOutcome
        public var startedAt: UInt64
        public var endedAt: UInt64
    }

    /// How the process is watched, once connected: through its agent, or from outside and why.
    public enum Connection {
        case agent(socket: Int32)
        /// `noAgent`: why not through an agent, when one was tried.
        case external(noAgent: String?)

        public var mode: WatchMode {
            if case .agent = self { return .agent }
            return .external
        }
    }

    private let target: TargetProcess
    private let settings: WatchSettings
    /// stallwatch's own signals, blocked from ``begin()`` to ``close()``: a Ctrl-C while connecting, watching or
    /// writing the summary ends the session cleanly instead of killing stallwatch.
    private var signals: SignalChannel?
    /// When ``begin()`` was called: the session's start, for the summary.
    private var started: UInt64 = 0
    private let mode: AttachMode
    /// `--duration`, nanoseconds.
    private let duration: UInt64?
    /// `--metrics`: where the session's numbers go as they are found.
    public var metrics: MetricsRecorder?

    /// Checks the process; throws, with the exit status, before touching it.
    public init(pid: Int32, settings: WatchSettings, mode: AttachMode, duration: UInt64?) throws(StallwatchError) {
        target = try Preflight.inspect(pid: pid)
        if let problem = ThreadInspector.foreignThreadProblem(settings.threads, pid: pid) {
            throw StallwatchError(message: problem, exitCode: ExitCode.usage)
        }
        self.settings = settings
        self.mode = mode
        self.duration = duration
    }

    public var pid: Int32 { target.pid }
    /// The process's name (`/proc/PID/comm`).
    public var processName: String { target.name }
    /// Things that make its stacks less trustworthy (a program replaced on disk).
    public var warnings: [String] { target.warnings }

    /// Starts the session: from here until ``close()`` stallwatch's signals end the watch instead of stallwatch.
    public func begin() throws(StallwatchError) {
        started = monotonicNow()
        signals = try SignalChannel()
    }

    /// When `--duration` runs out: counted from ``begin()``, so that connecting to the agent is part of it.
    private var deadline: UInt64? {
        duration.map { (started == 0 ? monotonicNow() : started) + $0 }
    }

    /// Ends the session: stallwatch's signals have their usual effect again.
    public func close() {
        signals = nil
    }

    /// Connects to the process's agent, or makes sure it can be watched from outside.
    public func connect() throws(StallwatchError) -> Connection {
        var noAgent: String?
        if mode != .external {
            do throws(AgentConnection.Failure) {
                return .agent(socket: try AgentConnection.connect(to: target, settings: settings, deadline: deadline))
            } catch {
                guard mode == .auto else {
                    throw StallwatchError(
                        message: "cannot watch pid \(pid) through its agent: \(error.reason)",
                        exitCode: ExitCode.runtimeMismatch)
                }
                noAgent = error.reason
            }
        }
        if let obstacle = target.ptraceObstacle {
            let agentNote = noAgent.map { " (and it has no agent to watch through: \($0))" } ?? ""
            throw StallwatchError(
                message: "cannot watch pid \(pid) from outside\(agentNote): \(obstacle.advice)",
                exitCode: ExitCode.permissionDenied)
        }
        return .external(noAgent: noAgent)
    }

    /// The kernel trace for the threads watched from outside (all of them without an agent), opened at the first
    /// ask, and why there is none when `auto` wanted one.
    private var outsideSource: (trace: KernelTrace?, warning: String?)?

    /// Opens what watches threads from outside over `connection`, once. Returns whether that is the kernel trace.
    public func prepareOutsideSource(for connection: Connection) throws(StallwatchError) -> Bool {
        if outsideSource == nil {
            var external = false
            if case .external = connection { external = true }
            outsideSource = try KernelTrace.forSource(
                settings.source, wanted: external || settings.threads.contains { $0 != .main })
        }
        return outsideSource?.trace != nil
    }

    /// Watches until the session ends; closes the agent's socket after.
    public func run(_ connection: Connection, output: any CollectorOutput) throws(StallwatchError) -> Outcome {
        if signals == nil { try begin() }
        guard let signals else { throw .internalError("the session has no signal channel") }
        var socket: Int32?
        if case .agent(let connected) = connection { socket = connected }
        defer { if let socket { Glibc.close(socket) } }
        let threshold = settings.thresholdNanoseconds
        let attached = AttachedProcess(
            process: target, deadline: deadline, external: socket == nil,
            threshold: threshold)
        // From outside, the main thread too; through the agent, only the threads `--thread` adds.
        _ = try prepareOutsideSource(for: connection)
        let (trace, traceWarning) = outsideSource ?? (nil, nil)
        let collector = Collector(
            socket: socket, signals: signals, target: attached, settings: settings, output: output, trace: trace,
            watchesMainFromProc: socket == nil)
        if let metrics { collector.record(into: metrics) }
        collector.run()
        let stalls = collector.closeStalls()
        var warnings =
            [traceWarning ?? collector.traceWarning].compactMap { $0 } + collector.refusals
            + collector.droppedMessageWarning
            + collector.unwatchedThreadNotes
        if connection.mode == .agent, collector.watchedPids.isEmpty {
            warnings.append(
                "the main run loop of pid \(pid) made no transition while stallwatch was attached: it runs no"
                    + " RunLoop.main or CFRunLoopRun, or it was stalled the whole time; try --mode external")
        }
        return Outcome(
            stalls: stalls, deadlocks: collector.deadlocks, warnings: warnings, watchedPids: collector.watchedPids,
            strategies: collector.strategiesUsed,
            attached: AttachOutcome(
                mode: connection.mode, pid: pid, processName: processName, ending: attached.ending ?? .exited),
            startedAt: started, endedAt: monotonicNow())
    }
}
