// `stallwatch run`: checks everything that can be checked, launches the workload, collects, summarises.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchReport

/// One run of a workload under watch, from validation to the exit status.
final class RunSession {
    private let command: [String]
    private let options: WatchOptions
    private let executable: String
    private let agentLibrary: String
    private let output: ReportOutput
    private let clock = WallClock.now()
    /// Fingerprints `--baseline` excuses from the budget.
    private let baseline: Set<String>

    /// Validates the request; throws before anything is launched.
    init(command: [String], options: WatchOptions) throws(RunError) {
        self.command = command
        self.options = options
        executable = try CommandResolver.resolve(command[0], path: ProcessInfo.processInfo.environment["PATH"])
        guard let agent = Installation.agentLibrary() else {
            throw .internalError(
                "the stallwatch agent library (libStallwatchAgent.so) is not installed next to stallwatch"
                    + " or at $\(Installation.agentOverride); rebuild with 'swift build'")
        }
        agentLibrary = agent
        if let mismatch = SwiftRuntimeCheck.mismatch(executable: executable, agentLibrary: agent) {
            throw RunError(message: mismatch, exitCode: ExitCode.runtimeMismatch)
        }
        if let path = options.baseline {
            do {
                baseline = try BaselineFile.fingerprints(at: path)
            } catch {
                throw RunError(message: error.message, exitCode: ExitCode.noSuchProcess)
            }
        } else {
            baseline = []
        }
        if let junit = options.junit {
            // Fail now, not after a long run: the JUnit file is written at the end.
            try JUnitFile.checkWritable(junit)
        }
        output = try ReportOutput(path: options.output, format: options.format, color: options.color, clock: clock)
    }

    /// Runs the workload to its end and returns stallwatch's exit status: the workload's own.
    func run() -> Int32 {
        let started = monotonicNow()
        var sockets: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0
        else {
            Terminal.writeError(
                "stallwatch: error: cannot create the agent socket: \(String(cString: strerror(errno)))\n")
            return ExitCode.internalError
        }
        let (collectorEnd, agentEnd) = (sockets[0], sockets[1])
        let signals: SignalChannel
        let workload: Workload
        do {
            signals = try SignalChannel()
            let environment = WorkloadLauncher.environment(
                base: ProcessInfo.processInfo.environment, agentLibrary: agentLibrary, socket: agentEnd,
                options: options)
            workload = try WorkloadLauncher.launch(
                command: command, executable: executable, environment: environment, inheritedSocket: agentEnd,
                stdoutToStderr: options.format == .json && output.isStandardOutput)
        } catch {
            Terminal.writeError("stallwatch: error: \(error.message)\n")
            return error.exitCode
        }
        close(agentEnd)

        let collector = Collector(
            socket: collectorEnd, signals: signals, workload: workload, options: options, output: output)
        let waitStatus = collector.run()
        let stalls = collector.closeStalls()
        let ended = monotonicNow()
        let workloadStatus = Self.exitCode(fromWaitStatus: waitStatus)
        let busyPeriods = collector.busyPeriodHistogram
        let verdict =
            options.budget.isSet
            ? options.budget.evaluate(stalls, baseline: baseline, endOfRun: ended, busyPeriods: busyPeriods) : nil
        let exitCode = Self.exitCode(workload: workloadStatus, timedOut: collector.timedOut, verdict: verdict)
        let warnings = collector.warnings()
        var summary = RunSummary(
            stalls: stalls, runNanoseconds: ended - started, watchedPids: collector.watched, exitStatus: exitCode,
            warnings: warnings)
        summary.budget = verdict
        summary.timedOut = collector.timedOut
        summary.busyPeriods = busyPeriods
        summary.thresholdNanoseconds = options.thresholdNanoseconds
        summary.framesPerSecond = collector.framesPerSecond
        output.write(summary)
        // Warnings also go to stderr unless the summary above already showed them there.
        if !(options.format == .text && output.isStandardOutput) {
            for warning in warnings { Terminal.writeError("stallwatch: warning: \(warning)\n") }
            if let verdict, verdict.isBroken {
                Terminal.writeError("stallwatch: stall budget broken: \(verdict.violations.joined(separator: "; "))\n")
            }
        }
        if let junit = options.junit {
            let report = JUnitReport(
                stalls: stalls, summary: summary, budget: options.budget, baseline: baseline, startOfRun: started,
                endOfRun: ended, command: command.joined(separator: " "), clock: clock)
            if !JUnitFile.write(report.render(), to: junit) {
                Terminal.writeError("stallwatch: warning: cannot write the --junit file '\(junit)'\n")
            }
        }
        output.close()
        close(collectorEnd)
        return exitCode
    }

    /// stallwatch's status: the workload's own failure wins; a timeout we enforced comes next; then a broken
    /// budget; otherwise success.
    static func exitCode(workload: Int32, timedOut: Bool, verdict: StallBudget.Verdict?) -> Int32 {
        if timedOut { return ExitCode.timedOut }
        if workload != 0 { return workload }
        if verdict?.isBroken == true { return ExitCode.budgetBroken }
        return ExitCode.success
    }

    /// The workload's status as a shell reports it: its exit code, or 128 + N if killed by signal N.
    static func exitCode(fromWaitStatus status: Int32) -> Int32 {
        let signal = status & 0x7f
        if signal == 0 { return (status >> 8) & 0xff }
        return ExitCode.killedBySignal(signal)
    }
}

extension WallClock {
    /// The offset between wall-clock and monotonic time, measured now.
    static func now() -> WallClock {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let monotonic = monotonicNow()
        return WallClock(
            offsetSeconds: Double(wall.tv_sec) + Double(wall.tv_nsec) / 1e9 - Double(monotonic) / 1e9)
    }
}
