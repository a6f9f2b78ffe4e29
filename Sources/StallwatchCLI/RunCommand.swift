// `stallwatch run` (and `demo`): the engine's run, written as reports, a summary, a JUnit file and an exit status.
import FoundationEssentials
import Glibc
import StallwatchCollector
import StallwatchCore
import StallwatchReport

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
        if let junit = options.junit { try JUnitFile.checkWritable(junit) }
        let output = try ReportOutput(
            path: options.output, format: options.format, color: options.color, clock: clock,
            writesDetectedRecords: true, watched: "the workload", exports: options.exports)
        defer { output.close() }

        let outcome = try watch.run(output: output, stdoutToStderr: options.redirectsWorkloadStandardOutput)
        let verdict =
            options.budget.isSet
            ? options.budget.evaluate(
                outcome.stalls, baseline: baseline, endOfRun: outcome.endedAt, busyPeriods: outcome.busyPeriods)
            : nil
        let exitCode = exitCode(
            workload: exitCode(fromWaitStatus: outcome.waitStatus), timedOut: outcome.timedOut, verdict: verdict)
        var summary = RunSummary(
            stalls: outcome.stalls, runNanoseconds: outcome.endedAt - outcome.startedAt,
            watchedPids: outcome.watchedPids, exitStatus: exitCode, warnings: outcome.warnings)
        summary.budget = verdict
        summary.timedOut = outcome.timedOut
        summary.busyPeriods = outcome.busyPeriods
        summary.thresholdNanoseconds = options.settings.thresholdNanoseconds
        summary.framesPerSecond = outcome.framesPerSecond
        output.write(summary)
        // Warnings also go to stderr unless the summary above already showed them there.
        if !(options.format == .text && output.isStandardOutput) {
            for warning in outcome.warnings { Diagnostics.warning(warning) }
            if let verdict, verdict.isBroken {
                Diagnostics.note("stall budget broken: \(verdict.violations.joined(separator: "; "))")
            }
        }
        if let junit = options.junit {
            let report = JUnitReport(
                stalls: outcome.stalls, summary: summary, budget: options.budget, baseline: baseline,
                startOfRun: outcome.startedAt, endOfRun: outcome.endedAt, command: command.joined(separator: " "),
                clock: clock)
            if !JUnitFile.write(report.render(), to: junit) {
                Diagnostics.warning("cannot write the --junit file '\(junit)'")
            }
        }
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
