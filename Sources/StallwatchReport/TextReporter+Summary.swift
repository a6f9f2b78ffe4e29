// The text summary closing a run or an attach session: counts, lengths, culprits, busy periods, budget.
import StallwatchCore

extension TextReporter {
    public mutating func render(_ summary: RunSummary) -> String {
        var lines: [String] = []
        let share =
            summary.runNanoseconds > 0
            ? Double(summary.totalStallNanoseconds) / Double(summary.runNanoseconds) * 100 : 0
        var headline = "stallwatch: \(summary.stallCount) stall\(summary.stallCount == 1 ? "" : "s")"
        if summary.stallCount > 0 {
            headline +=
                ", \(Self.milliseconds(summary.totalStallNanoseconds)) ms stalled"
                + " (\(Self.percent(share)) of \(Self.seconds(summary.runNanoseconds)) s)"
                + ", longest \(Self.milliseconds(summary.longestStallNanoseconds)) ms"
            if summary.unfinishedCount > 0 { headline += ", \(summary.unfinishedCount) unfinished" }
            if summary.suppressedCount > 0 { headline += ", \(summary.suppressedCount) shortened by --rate-limit" }
        } else {
            headline += " in \(Self.seconds(summary.runNanoseconds)) s"
        }
        if summary.deadlockCount > 0 {
            headline += "; \(summary.deadlockCount) DEADLOCK\(summary.deadlockCount == 1 ? "" : "S")"
        }
        if let status = summary.exitStatus { headline += "; exit status \(status)" }
        lines.append(style.bold(headline))
        if summary.stallCount - summary.unfinishedCount > 1 {
            lines.append(
                "  stall length: median \(Self.milliseconds(summary.medianStallNanoseconds)) ms,"
                    + " p95 \(Self.milliseconds(summary.p95StallNanoseconds)) ms")
        }
        if !summary.topCulprits.isEmpty {
            lines.append("  top culprits by stalled time:")
            for culprit in summary.topCulprits {
                lines.append(
                    "    \(Self.milliseconds(culprit.totalNanoseconds).leftPadded(to: 7)) ms"
                        + "  \(String(culprit.count).leftPadded(to: 3))×  \(culprit.symbol)")
            }
        }
        if !summary.threads.isEmpty {
            lines.append("  stalls by thread:")
            for total in summary.threads {
                let thread = total.name == "main" ? "main thread" : "\(total.name) (tid \(total.tid))"
                lines.append(
                    "    \(Self.milliseconds(total.stalledNanoseconds).leftPadded(to: 7)) ms"
                        + "  \(String(total.stallCount).leftPadded(to: 3))×  \(thread) of pid \(total.pid)")
            }
        }
        if let periods = summary.busyPeriods, periods.total > 0 {
            func ms(_ value: UInt64?) -> String { value.map { Self.precise($0) } ?? "-" }
            var line =
                "  run-loop busy periods: \(periods.total); p50 \(ms(periods.percentile(50))) ms,"
                + " p90 \(ms(periods.percentile(90))) ms, p99 \(ms(periods.percentile(99))) ms,"
                + " p99.9 \(ms(periods.percentile(99.9))) ms, max \(ms(periods.maximum)) ms"
                + " (percentiles within \(LatencyHistogram.precisionPercent) %)"
            if let threshold = summary.thresholdNanoseconds {
                line += "; \(periods.count(atLeast: threshold)) of \(Self.milliseconds(threshold)) ms or more"
            }
            lines.append(line)
        }
        if !summary.strategies.isEmpty {
            lines.append("  watched by " + summary.strategies.map(\.watchedBy).joined(separator: " and "))
        }
        if let series = frameRateSeries(summary) { lines.append(series) }
        if summary.timedOut { lines.append("stallwatch: --timeout expired: the workload was stopped") }
        if let verdict = summary.budget {
            if verdict.isBroken {
                lines.append(
                    style.bold("stallwatch: stall budget broken: " + verdict.violations.joined(separator: "; ")))
            } else {
                lines.append("stallwatch: within the stall budget")
            }
            if verdict.excusedByBaseline > 0 {
                lines.append("  \(verdict.excusedByBaseline) stall(s) left out: known in the baseline")
            }
        }
        for warning in summary.warnings {
            lines.append("stallwatch: warning: \(warning)")
        }
        if let attached = summary.attached { lines.append("stallwatch: " + ending(attached, after: summary)) }
        return TerminalText.lines(lines) + "\n"
    }

    /// How an attach session ended, and that the process keeps running where it does.
    func ending(_ attached: AttachOutcome, after summary: RunSummary) -> String {
        let process = "pid \(attached.pid) (\(attached.processName))"
        let after = "after \(Self.seconds(summary.runNanoseconds)) s"
        switch attached.ending {
        case .duration: return "detached from \(process) \(after) (--duration); it keeps running"
        case .signal(let number):
            return "detached from \(process) \(after) (\(Self.signalName(number))); it keeps running"
        case .exited: return "\(process) exited \(after) of watching"
        case .agentDisconnected:
            return "the agent in \(process) closed the connection \(after); the process keeps running"
        }
    }

    static func signalName(_ number: Int32) -> String {
        switch number {
        case 2: "Ctrl-C, SIGINT"
        case 15: "SIGTERM"
        case 1: "SIGHUP"
        case 3: "SIGQUIT"
        default: "signal \(number)"
        }
    }
}
