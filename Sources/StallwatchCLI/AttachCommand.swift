// `stallwatch attach`: the engine's attach session, announced on stderr, written as reports and a summary.
import StallwatchCollector
import StallwatchCore
import StallwatchReport

/// One attach session, from the preflight to the summary.
enum AttachCommand {
    /// Watches until the session ends; returns stallwatch's exit status.
    static func run(_ options: AttachOptions) throws(StallwatchError) -> Int32 {
        let watch = try AttachWatch(
            pid: options.pid, settings: options.watch.settings, mode: options.mode,
            duration: options.duration?.nanoseconds)
        let metrics = try MetricsServing.start(options.watch.metrics)
        defer { metrics?.endpoint.stop() }
        watch.metrics = metrics?.recorder
        let output = try ReportOutput(
            path: options.watch.output, format: options.watch.format, color: options.watch.color, clock: .now(),
            writesProgressRecords: false, watched: "the process", exports: options.watch.exports,
            rotation: options.watch.rotation)
        defer { output.close() }
        try watch.begin()
        defer { watch.close() }
        for warning in watch.warnings { Diagnostics.warning(warning) }
        let connection = try watch.connect()
        let traced = try watch.prepareOutsideSource(for: connection)
        Diagnostics.note(
            announcement(connection, pid: watch.pid, name: watch.processName, options: options, traced: traced))
        let outcome = try watch.run(connection, output: output)
        var summary = RunSummary(
            stalls: outcome.stalls, runNanoseconds: outcome.endedAt - outcome.startedAt,
            watchedPids: outcome.watchedPids, exitStatus: nil,
            warnings: outcome.warnings + [output.lossWarning].compactMap { $0 })
        summary.attached = outcome.attached
        summary.deadlockCount = outcome.deadlocks.count
        summary.strategies = outcome.strategies
        output.write(summary)
        if !(options.watch.format == .text && output.isStandardOutput) {
            for warning in summary.warnings { Diagnostics.warning(warning) }
        }
        return output.close() ? ExitCode.success : ExitCode.reportsLost
    }

    /// How the process is watched, and how to stop.
    /// - Parameter traced: the threads watched from outside are followed by the kernel trace, not sampled.
    static func announcement(
        _ connection: AttachWatch.Connection, pid: Int32, name: String, options: AttachOptions, traced: Bool = false
    ) -> String {
        let process = "pid \(pid) (\(name))"
        let threads = options.watch.settings.threads
        let selected =
            threads.isMainOnly ? "its main thread" : "threads " + threads.map { "'\($0)'" }.joined(separator: ", ")
        switch connection {
        case .agent:
            let others =
                threads.isMainOnly ? "" : " (and \(selected) \(traced ? "through the kernel trace" : "from /proc"))"
            return "watching \(process) through its agent\(others); Ctrl-C detaches"
        case .external(let noAgent):
            let why = noAgent.map { "; \($0)" } ?? ""
            let how =
                traced
                ? "\(selected) followed by the kernel trace, exactly"
                : "\(selected) sampled every \(DurationParser.format(options.watch.threshold))"
            return "watching \(process) from outside (external mode: \(how)\(why)); Ctrl-C detaches"
        }
    }
}
