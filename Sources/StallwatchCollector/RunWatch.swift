// `stallwatch run`'s engine: checks what can be checked, launches the workload with the agent, collects until it
// exits.
import CStallwatchSystem
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchMetrics
import StallwatchSystem

/// One workload launched under watch, from validation to its exit.
public final class RunWatch {
    /// What the run found, for the summary and the exit status.
    public struct Outcome {
        /// Every stall: finished ones first, then those still going on when the workload exited.
        public var stalls: [StallReport]
        /// Deadlocks found at the stalls' captures, each once.
        public var deadlocks: [DeadlockReport] = []
        /// The workload's raw wait status.
        public var waitStatus: Int32
        /// `--timeout` expired and the workload was stopped.
        public var timedOut: Bool
        /// What the user should know about what was (not) watched.
        public var warnings: [String]
        /// Processes whose main run loop the agent watched.
        public var watchedPids: [Int32]
        /// How they were watched (run-loop observers, main-queue pings), each strategy once.
        public var strategies: [WatchStrategy]
        public var busyPeriods: LatencyHistogram?
        public var framesPerSecond: [Double]?
        /// When the workload was launched and when the watch ended, `CLOCK_MONOTONIC` nanoseconds.
        public var startedAt: UInt64
        public var endedAt: UInt64
    }

    private let command: [String]
    private let executable: String
    private let agentLibrary: String
    private let settings: WatchSettings
    /// `--timeout`, nanoseconds.
    private let timeout: UInt64?
    /// stallwatch's own signals, blocked from ``run(output:stdoutToStderr:)`` to ``close()``, so that a signal
    /// arriving while the summary is written still only reaches the workload.
    private var signals: SignalChannel?
    /// The kernel trace for threads watched from outside (`--thread`), and why there is none when `auto` wanted one.
    private let trace: KernelTrace?
    private let traceWarning: String?
    /// `--metrics`: where the run's numbers go as they are found.
    public var metrics: MetricsRecorder?

    /// Resolves the command and the agent, and checks they share a Swift runtime; throws before anything runs.
    public init(command: [String], settings: WatchSettings, timeout: UInt64?) throws(StallwatchError) {
        if let problem = ThreadInspector.foreignThreadProblem(settings.threads, pid: nil) {
            throw StallwatchError(message: problem, exitCode: ExitCode.usage)
        }
        self.command = command
        self.settings = settings
        self.timeout = timeout
        executable = try CommandResolver.resolve(command[0], path: ProcessInfo.processInfo.environment["PATH"])
        guard let agent = Installation.agentLibrary() else {
            throw .internalError(
                "the stallwatch agent library (libStallwatchAgent.so) is not installed next to stallwatch"
                    + " or at $\(Installation.agentOverride); rebuild with 'swift build'")
        }
        agentLibrary = agent
        if let mismatch = SwiftRuntimeCheck.mismatch(executable: executable, agentLibrary: agent) {
            throw StallwatchError(message: mismatch, exitCode: ExitCode.runtimeMismatch)
        }
        // Only threads beyond the main one are watched from outside under `run`: the agent watches the main loop.
        (trace, traceWarning) = try KernelTrace.forSource(
            settings.source, wanted: settings.threads.contains { $0 != .main })
    }

    /// Runs the workload to its end.
    ///
    /// - Parameter stdoutToStderr: send the workload's stdout to stallwatch's stderr (JSON reports own stdout).
    public func run(output: any CollectorOutput, stdoutToStderr: Bool) throws(StallwatchError) -> Outcome {
        let started = monotonicNow()
        var sockets: [Int32] = [0, 0]
        do {
            try Syscall.call("socketpair") {
                socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets)
            }
        } catch {
            throw .internalError("cannot create the agent socket: \(error.reason)")
        }
        let (collectorEnd, agentEnd) = (sockets[0], sockets[1])
        // Every datagram then says which process sent it, whatever the message itself claims.
        _ = sw_socket_pass_credentials(collectorEnd)
        defer { Glibc.close(collectorEnd) }
        let signals: SignalChannel
        let workload: Workload
        let terminal: ForegroundTerminal?
        do throws(StallwatchError) {
            signals = try SignalChannel()
            self.signals = signals
            let environment = WorkloadLauncher.environment(
                base: ProcessInfo.processInfo.environment, agentLibrary: agentLibrary, socket: agentEnd,
                settings: settings)
            // `--timeout` stops what the workload started too: a process group of its own, as GNU `timeout` has.
            terminal = timeout == nil ? nil : ForegroundTerminal()
            workload = try WorkloadLauncher.launch(
                command: command, executable: executable, environment: environment, inheritedSocket: agentEnd,
                stdoutToStderr: stdoutToStderr, ownProcessGroup: timeout != nil, terminal: terminal)
        } catch {
            Glibc.close(agentEnd)
            throw error
        }
        Glibc.close(agentEnd)

        let target = LaunchedWorkload(workload, timeout: timeout, terminal: terminal, now: monotonicNow())
        let collector = Collector(
            socket: collectorEnd, signals: signals, target: target, settings: settings, output: output, trace: trace)
        collector.preloadWitness = PreloadWitness(agentLibrary: agentLibrary)
        if let metrics { collector.record(into: metrics) }
        collector.run()
        let stalls = collector.closeStalls()
        return Outcome(
            stalls: stalls, deadlocks: collector.deadlocks, waitStatus: target.waitStatus ?? 0,
            timedOut: target.timedOut,
            warnings: [traceWarning ?? collector.traceWarning].compactMap { $0 }
                + Self.warnings(collector, target: target, socket: agentEnd, startedAt: started),
            watchedPids: collector.watchedPids,
            strategies: collector.strategiesUsed, busyPeriods: collector.busyPeriodHistogram,
            framesPerSecond: collector.framesPerSecond,
            startedAt: started, endedAt: monotonicNow())
    }

    /// Restores stallwatch's signal mask, once the run's reports are written.
    public func close() {
        signals = nil
    }

    /// How long the socket may hang up before the workload's exit and still be the exit closing it: the kernel
    /// closes a dying process's descriptors before its parent can reap it, and a loaded machine may take a while.
    static let exitClosingGrace: UInt64 = 250_000_000

    /// What the agents said, and why nothing may have been watched.
    /// - Parameter socket: the workload's descriptor of the agent's socket.
    private static func warnings(
        _ collector: Collector, target: LaunchedWorkload, socket: Int32, startedAt: UInt64
    ) -> [String] {
        var warnings = collector.refusals + collector.droppedMessageWarning + collector.unwatchedThreadNotes
        if let hungUp = collector.hungUpAt, !collector.loadedPids.isEmpty,
            hungUp + exitClosingGrace < target.exitedAt ?? .max
        {
            let tenths = (hungUp - startedAt) / 100_000_000
            let seconds = "\(tenths / 10).\(tenths % 10)"
            let descriptor = "descriptor \(socket) in it, named by \(AgentEnvironment.socket)"
            warnings.append(
                "the workload closed stallwatch's socket (\(descriptor)) \(seconds) s into the run and went on running:"
                    + " nothing after that was watched; a program that closes its inherited descriptors must leave"
                    + " that one open")
            return warnings
        }
        if let unwatched = collector.preloadWitness?.warning {
            warnings.append(unwatched)
        } else if collector.loadedPids.isEmpty, target.timedOut {
            warnings.append(
                "--timeout stopped the workload before the stallwatch agent had loaded into it, so nothing was"
                    + " watched")
        } else if collector.loadedPids.isEmpty {
            warnings.append(
                "the stallwatch agent was never loaded into the workload, so nothing was watched;"
                    + " it is injected with LD_PRELOAD, which statically linked programs and programs that gain"
                    + " privileges (setuid, setgid, file capabilities) ignore")
        } else if collector.watchedPids.isEmpty, collector.settings.threads.isMainOnly {
            warnings.append(
                "the workload's main run loop never ran and no thread of it rested in an event-loop wait, so nothing"
                    + " was watched; stallwatch watches a main thread that runs RunLoop.main or CFRunLoopRun, a main"
                    + " queue dispatchMain() serves, and any thread that waits in epoll_wait, poll or select again and"
                    + " again")
        }
        return warnings
    }
}
