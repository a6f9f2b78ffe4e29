// `stallwatch run` (and `demo`): the engine's run, written as reports, a summary, a JUnit file and an exit status.
import FoundationEssentials
import Glibc
import StallwatchCollector
import StallwatchCore
import StallwatchReport
import StallwatchSystem

/// One run of a workload under watch, from validation to the exit status.
enum RunCommand {
    /// Validates everything it can before launching, runs the workload to its end, and returns stallwatch's exit
    /// status: the workload's own, unless stallwatch's verdict overrides it.
    static func run(_ command: [String], options: WatchOptions) throws(StallwatchError) -> Int32 {
        let clock = WallClock.now()
        let watch = try RunWatch(command: command, settings: options.settings, timeout: options.timeout?.nanoseconds)
        var baseline: Set<String> = []
        if let path = options.baseline {
            do {
                baseline = try BaselineFile.fingerprints(at: path)
            } catch {
                throw StallwatchError(message: error.message, exitCode: ExitCode.noSuchProcess)
            }
        }
        // Fail now, not after a long run: the JUnit file is written at the end.
        if let junit = options.junit {
            if let output = options.output { try DistinctFiles.check(output, "'--output'", junit, "'--junit'") }
            try JUnitFile.checkWritable(junit)
        }
        let metrics = try MetricsServing.start(options.metrics)
        defer { metrics?.endpoint.stop() }
        watch.metrics = metrics?.recorder
        let output = try ReportOutput(
            path: options.output, format: options.format, color: options.color, clock: clock,
            writesProgressRecords: true, watched: "the workload", exports: options.exports, rotation: options.rotation)
        // On a thrown error too: what was detected before it still reaches the reader.
        defer { output.close() }
        defer { watch.close() }

        let outcome = try watch.run(output: output, stdoutToStderr: options.redirectsWorkloadStandardOutput)
        let verdict =
            options.budget.isSet
            ? options.budget.evaluate(
                outcome.stalls, baseline: baseline, endOfRun: outcome.endedAt, busyPeriods: outcome.busyPeriods,
                deadlocks: outcome.deadlocks.count)
            : nil
        let workload = exitCode(fromWaitStatus: outcome.waitStatus)
        // Reports lost so far; the JUnit file and the last records' drain can still add to it.
        var reportsLost = output.lostRecords
        func status() -> Int32 {
            exitCode(workload: workload, timedOut: outcome.timedOut, reportsLost: reportsLost, verdict: verdict)
        }
        var summary = RunSummary(
            stalls: outcome.stalls, runNanoseconds: outcome.endedAt - outcome.startedAt,
            watchedPids: outcome.watchedPids, exitStatus: status(),
            warnings: outcome.warnings + [output.lossWarning].compactMap { $0 })
        summary.budget = verdict
        summary.deadlockCount = outcome.deadlocks.count
        summary.strategies = outcome.strategies
        summary.timedOut = outcome.timedOut
        summary.busyPeriods = outcome.busyPeriods
        summary.thresholdNanoseconds = options.settings.thresholdNanoseconds
        summary.framesPerSecond = outcome.framesPerSecond
        // The JUnit file first, so that the summary's exit status counts it.
        if let junit = options.junit {
            var report = JUnitReport(
                stalls: outcome.stalls, summary: summary, budget: options.budget, baseline: baseline,
                startOfRun: outcome.startedAt, endOfRun: outcome.endedAt, command: command.joined(separator: " "),
                clock: clock)
            report.deadlocks = outcome.deadlocks
            if let reason = JUnitFile.write(report.render(), to: junit) {
                let warning = "cannot write the --junit file '\(junit)': \(reason)"
                summary.warnings.append(warning)
                reportsLost = true
                summary.exitStatus = status()
            }
        }
        output.write(summary)
        // Warnings also go to stderr unless the summary above already showed them there.
        if !(options.format == .text && output.isStandardOutput) {
            for warning in summary.warnings { Diagnostics.warning(warning) }
            if let verdict, verdict.isBroken {
                Diagnostics.note("stall budget broken: \(verdict.violations.joined(separator: "; "))")
            }
        }
        if !output.close() { reportsLost = true }
        return status()
    }

    /// stallwatch's status: a timeout we enforced first; then the workload's own failure; then lost reports (a CI
    /// job must not pass on a report nobody got); then a broken budget; otherwise success.
    static func exitCode(workload: Int32, timedOut: Bool, reportsLost: Bool = false, verdict: StallBudget.Verdict?)
        -> Int32
    {
        if timedOut { return ExitCode.timedOut }
        if workload != 0 { return workload }
        if reportsLost { return ExitCode.reportsLost }
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
