// `stallwatch attach`: watches a running process through its listening agent or from outside, until Ctrl-C,
// --duration or the process's exit, and leaves it running as it was.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchReport

/// What a ``Collector`` watches, which decides how its watch ends and what it may do to the process.
enum CollectorTarget {
    /// A workload `run` launched: the watch ends when it exits and it is reaped; signals sent to stallwatch alone
    /// are forwarded to it.
    case child(Workload)
    /// A process `attach` watches: never reaped, never signalled; the watch ends at its exit, at a signal to
    /// stallwatch, at the deadline, or when its agent hangs up.
    case attached(AttachedTarget)
}

/// A running process under `stallwatch attach`.
struct AttachedTarget {
    let process: TargetProcess
    /// When `--duration` runs out, `CLOCK_MONOTONIC` nanoseconds.
    let deadline: UInt64?
    /// External mode's sampler; nil when the process's agent reports.
    let watcher: ExternalWatcher?
}

/// Where the collector writes each finished stall.
protocol StallReportWriter: AnyObject {
    func write(_ stall: StallReport)
    /// The record written when a stall is detected (see ``Reporter/renderDetected(_:)``).
    func writeDetected(_ stall: StallReport)
    /// A `--fps` reading or run of dropped frames.
    func write(_ frames: FrameRateReport)
}

extension StallReportWriter {
    func writeDetected(_ stall: StallReport) {}
    /// `attach` has no `--fps`: nothing to write.
    func write(_ frames: FrameRateReport) {}
}

extension ReportOutput: StallReportWriter {}

/// One attach session, from the preflight to the summary.
final class AttachSession {
    private let options: AttachOptions
    private let target: TargetProcess
    private let file: ReportOutput

    /// Checks the process and opens the output; throws (with the exit status) before touching the process.
    init(options: AttachOptions) throws(RunError) {
        self.options = options
        target = try Preflight.inspect(pid: options.pid)
        file = try ReportOutput(
            path: options.watch.output, format: options.watch.format, color: options.watch.color, clock: .now())
    }

    /// Watches until the session ends; returns stallwatch's exit status.
    func run() -> Int32 {
        let started = monotonicNow()
        let signals: SignalChannel
        do {
            signals = try SignalChannel()
        } catch {
            Terminal.writeError("stallwatch: error: \(error.message)\n")
            return error.exitCode
        }
        for warning in target.warnings { Terminal.writeError("stallwatch: warning: \(warning)\n") }
        let pid = target.pid
        var socket: Int32?
        var noAgent: String?
        if options.mode != .external {
            do {
                socket = try AgentConnection.connect(to: target, options: options.watch)
            } catch {
                guard options.mode == .auto else {
                    Terminal.writeError(
                        "stallwatch: error: cannot watch pid \(pid) through its agent: \(error.reason)\n")
                    return ExitCode.runtimeMismatch
                }
                noAgent = error.reason
            }
        }
        if socket == nil, let obstacle = target.ptraceObstacle {
            let agentNote = noAgent.map { " (and it has no agent to watch through: \($0))" } ?? ""
            Terminal.writeError(
                "stallwatch: error: cannot watch pid \(pid) from outside\(agentNote): \(obstacle.advice)\n")
            return ExitCode.permissionDenied
        }
        defer { if let socket { close(socket) } }
        let mode: WatchMode = socket == nil ? .external : .agent
        let threshold = options.watch.thresholdNanoseconds
        let now = monotonicNow()
        let watcher =
            mode == .external
            ? ExternalWatcher(
                pid: pid, threshold: threshold, count: options.watch.count, maxSamples: options.watch.maxSamples,
                now: now)
            : nil
        announce(mode: mode, noAgent: noAgent)
        let output = AttachOutput(
            file: file,
            reporter: AttachReporter(
                json: options.watch.format == .json, clock: .now(),
                colored: ReportOutput.wantsColor(options.watch.color, descriptor: file.descriptor), mode: mode,
                samplingInterval: threshold),
            watcher: watcher)
        let attached = AttachedTarget(
            process: target, deadline: options.duration.map { now + $0.nanoseconds }, watcher: watcher)
        let collector = Collector(
            socket: socket, signals: signals, target: .attached(attached), options: options.watch, output: output)
        _ = collector.run()
        let stalls = collector.closeStalls()
        var warnings = collector.agentRefusals
        if mode == .agent, collector.watched.isEmpty {
            warnings.append(
                "the main run loop of pid \(pid) made no transition while stallwatch was attached: it runs no"
                    + " RunLoop.main or CFRunLoopRun, or it was stalled the whole time; try --mode external")
        }
        let summary = RunSummary(
            stalls: stalls, runNanoseconds: monotonicNow() - started, watchedPids: collector.watched, exitStatus: nil,
            warnings: warnings)
        output.write(summary, pid: pid, processName: target.name, ending: collector.ending ?? .exited)
        if !(options.watch.format == .text && file.isStandardOutput) {
            for warning in warnings { Terminal.writeError("stallwatch: warning: \(warning)\n") }
        }
        file.close()
        return ExitCode.success
    }

    /// One line on stderr saying how the process is watched, and how to stop.
    private func announce(mode: WatchMode, noAgent: String?) {
        let process = "pid \(target.pid) (\(target.name))"
        switch mode {
        case .agent:
            Terminal.writeError("stallwatch: watching \(process) through its agent; Ctrl-C detaches\n")
        case .external:
            let why = noAgent.map { "; \($0)" } ?? ""
            Terminal.writeError(
                "stallwatch: watching \(process) from outside (external mode: its main thread sampled every"
                    + " \(DurationParser.format(options.watch.threshold))\(why)); Ctrl-C detaches\n")
        }
    }
}

/// `attach`'s report stream: ``ReportOutput``'s destination, rendered by an ``AttachReporter``.
final class AttachOutput: StallReportWriter {
    private let file: ReportOutput
    private var reporter: AttachReporter
    private let watcher: ExternalWatcher?
    private var failed = false

    init(file: ReportOutput, reporter: AttachReporter, watcher: ExternalWatcher?) {
        self.file = file
        self.reporter = reporter
        self.watcher = watcher
    }

    func write(_ stall: StallReport) {
        let startedBeforeAttach = watcher?.startedAtFirstLook.contains(stall.identifier) ?? false
        write(reporter.render(stall, startedBeforeAttach: startedBeforeAttach))
    }

    func write(_ summary: RunSummary, pid: Int32, processName: String, ending: AttachEnding) {
        write(reporter.render(summary, pid: pid, processName: processName, ending: ending))
    }

    private func write(_ text: String) {
        guard !failed else { return }
        if !FileDescriptorWriter.writeAll(text, to: file.descriptor) {
            failed = true
            Terminal.writeError(
                "stallwatch: warning: cannot write reports (\(String(cString: strerror(errno))));"
                    + " the process keeps running\n")
        }
    }
}

