// Item 4's table and its checks against the issue: faster than eu-stack in wall time, less stopped time.

extension StackComparison {
    /// What stallwatch's wall time is spent on beyond eu-stack's (docs/attach-and-stack.md).
    static let wallLimit =
        "starting and exiting the process (~3 ms, eu-stack ~2), finding each image's unwind table in the target, "
        + "and reading the program's DWARF for file:line and inlined frames (~1–3 ms; eu-stack reads ELF symbols "
        + "only)"

    /// Why the longest gap may not show a short stop: on a loaded machine it is often a preemption.
    static let gapLimit =
        "on a machine with 2 CPUs and other jobs the target is preempted for milliseconds at a time, longer than "
        + "a sub-millisecond stop, the more often the longer a run takes and the more CPU the tool itself uses "
        + "(stallwatch reads symbols and DWARF after the capture)"

    /// The table (ratios are stallwatch ÷ the row's tool) and one check per peer and measure.
    static func report(_ rows: [Measured]) -> SectionReport {
        var table = ResultTable(
            "stallwatch stack vs eu-stack vs gdb: runs taking turns against the gap target; target stopped: the "
                + "longest gap in its own clock during a run (the stop plus the wait for a CPU, or a preemption if "
                + "longer), all its gaps (also every preemption), and the kernel's not-runnable time "
                + "(schedstat: the stop alone); then runs against a stalled stallwatch-demo --scenario cpu (what each "
                + "shows of ChecksumEngine.crunchChecksums); ratio = stallwatch ÷ tool, of medians",
            header: [
                "tool", "runs (gap target + demo)", "wall time, median (fastest)", "wall ratio",
                "longest gap, median (shortest)", "ratio", "all gaps, median", "not runnable, median", "ratio",
                "wall time on the demo", "Swift names", "Swift file:line",
            ])
        guard let ours = rows.first else { return SectionReport() }
        let ourWall = ours.wall.median
        let ourStopped = ours.stopped.median
        let ourNotRunnable = ours.notRunnable.median
        var report = SectionReport()
        for (index, row) in rows.enumerated() {
            let wall = row.wall.median
            let stopped = row.stopped.median
            let notRunnable = row.notRunnable.median
            table.add([
                "`\(row.tool.label)`", "\(row.tool.runs) + \(row.tool.demoRuns)",
                "\(Self.ms(wall)) (\(Self.ms(row.wall.min() ?? 0)))", index == 0 ? "—" : Self.ratio(ourWall / wall),
                "\(Format.milliseconds(stopped)) (\(Format.milliseconds(row.stopped.min() ?? 0)))",
                index == 0 ? "—" : Self.ratio(ourStopped / stopped), Format.milliseconds(row.allGaps.median),
                row.notRunnable.isEmpty ? "n/a" : Format.milliseconds(notRunnable),
                index == 0 || row.notRunnable.isEmpty ? "—" : Self.ratio(ourNotRunnable / notRunnable),
                Self.ms(row.demoWall.median),
                row.shows.names, row.shows.location,
            ])
            guard index > 0 else { continue }
            if row.tool.isVariant {
                report.lines.append("stack wall ratio vs `\(row.tool.label)`: \(Self.ratio(ourWall / wall))")
                continue
            }
            let peer = row.tool.label.split(separator: " ").first.map(String.init) ?? row.tool.label
            report.lines.append("stack wall ratio vs \(peer): \(Self.ratio(ourWall / wall))")
            report.lines.append("stack stopped ratio vs \(peer): \(Self.ratio(ourStopped / stopped))")
            report.targets += [
                TargetCheck(
                    "stallwatch stack wall time vs \(peer)", measured: "\(Self.ms(ourWall)) vs \(Self.ms(wall))",
                    target: "faster", met: ourWall < wall, limit: wallLimit),
                TargetCheck(
                    "stallwatch stack target stopped (longest gap) vs \(peer)",
                    measured: "\(Format.milliseconds(ourStopped)) vs \(Format.milliseconds(stopped))",
                    target: "less", met: ourStopped < stopped, limit: gapLimit),
            ]
            if !row.notRunnable.isEmpty, !ours.notRunnable.isEmpty {
                report.lines.append("stack not-runnable ratio vs \(peer): \(Self.ratio(ourNotRunnable / notRunnable))")
                report.targets.append(
                    TargetCheck(
                        "stallwatch stack target stopped (not runnable) vs \(peer)",
                        measured: "\(Format.milliseconds(ourNotRunnable)) vs \(Format.milliseconds(notRunnable))",
                        target: "less", met: ourNotRunnable < notRunnable,
                        limit: "PTRACE_INTERRUPT's stop goes through the scheduler"))
            }
        }
        report.tables = [table]
        return report
    }

    /// Wall times: a tenth of a millisecond is as fine as process start-up allows.
    private static func ms(_ nanoseconds: Double) -> String { Format.fixed(nanoseconds / 1e6, 1) + " ms" }

    /// Two decimals, or four when stallwatch's share is tiny (against gdb's stop).
    private static func ratio(_ value: Double) -> String { Format.fixed(value, value >= 0.1 ? 2 : 4) }
}
