// Item 4: `stallwatch stack PID` against `eu-stack -1 -p PID` and `gdb -p PID -batch -ex bt` on the same
// stalled targets: wall time, how long each stopped the target, and what each shows.
import Foundation

/// Runs each tool many times, taking turns, against the gap target (which measures from inside how long each
/// run kept it from running), then a few times against a stalled `stallwatch-demo --scenario cpu`, whose
/// stack says whether a tool demangles Swift names and gives Swift file:line.
///
/// The tools are the bench's children, not the targets' parents: under Yama's `ptrace_scope` 1 only root
/// (or CAP_SYS_PTRACE) may run this section.
struct StackComparison {
    let products: BuildProducts

    /// Between runs, so each finds the target spinning again.
    static let pause = 0.1
    /// Long enough for every run however slow the machine; the driver stops the target when done.
    static let gapTargetSeconds = 300.0
    /// How long the target is left alone each round, to show how often the machine preempts it anyway.
    static let idleWindow = 0.05

    /// One tool's measurements; times in nanoseconds.
    struct Measured {
        let tool: StackTool
        var wall: [Double] = []
        /// Per run, the longest gap in the target's clock: the tool's stop and the wait for a CPU after it.
        var stopped: [Double] = []
        /// Per run, every gap: also the times the target was crowded off a CPU, by the tool or anything else.
        var allGaps: [Double] = []
        /// Per run, the kernel's account: time the target was not runnable (``SchedulerStatistics``).
        var notRunnable: [Double] = []
        var demoWall: [Double] = []
        var shows = StackShows(output: "")
    }

    func run() throws(BenchError) -> SectionReport {
        let (tools, missing) = StackTool.contenders(products: products)
        if !missing.isEmpty {
            return Self.skipped("\(missing.joined(separator: " and ")) not found (Scripts/bench installs the peers)")
        }
        if let reason = Self.ptraceRestriction() { return Self.skipped(reason) }

        var measured = tools.map { Measured(tool: $0) }
        BenchOutput.progress("stack: " + tools.map { "\($0.runs) × \($0.label)" }.joined(separator: ", "))
        let background = try measureOnGapTarget(&measured)
        BenchOutput.progress("stack: the same on a stalled stallwatch-demo --scenario cpu")
        try measureOnDemo(&measured)
        var report = Self.report(measured)
        if let euStack = tools.first(where: { $0.label.hasPrefix("eu-stack") }) {
            BenchOutput.progress("stack: the same on a large program, the toolchain's swift-build")
            report.lines += LargeStackTarget(products: products).measure(euStack: euStack.executable)
        }
        report.lines.append(
            "background: with no tool running, the gap target's longest gap in \(Int(Self.idleWindow * 1000)) ms: "
                + "median \(Format.milliseconds(background.longest.median)), "
                + "max \(Format.milliseconds(background.longest.max() ?? 0)); all its gaps: median "
                + Format.milliseconds(background.all.median))
        return report
    }

    /// Runs the tools in turns against one gap target, then charges each run with the gaps in the target's
    /// clock that began before the run ended, counted from when it began (as the capture section does).
    /// A stop is one gap; on a shared machine the target is also preempted now and then, so the longest gap
    /// is the stop unless a preemption was longer, and the sum of all gaps is an upper bound. Each round also leaves the target alone for
    /// ``idleWindow``, whose gaps show the background.
    ///
    /// - Returns: The longest gap and all gaps in each idle window.
    private func measureOnGapTarget(_ measured: inout [Measured]) throws(BenchError) -> (
        longest: [Double], all: [Double]
    ) {
        let target = try ChildProcess([products.bench, "gap-target", "--seconds", String(Self.gapTargetSeconds)])
        _ = try target.waitForLine(fromStandardError: false, timeout: 10) { $0 == GapRecorder.readyLine }
        var windows: [(tool: Int, start: UInt64, end: UInt64)] = []
        var idle: [(start: UInt64, end: UInt64)] = []
        do {
            for round in 0..<(measured.map(\.tool.runs).max() ?? 0) {
                MonotonicClock.sleep(seconds: Self.pause)
                let start = MonotonicClock.now()
                MonotonicClock.sleep(seconds: Self.idleWindow)
                idle.append((start, MonotonicClock.now()))
                for index in measured.indices where round < measured[index].tool.runs {
                    MonotonicClock.sleep(seconds: Self.pause)
                    let before = SchedulerStatistics(pid: target.pid, tid: target.pid)
                    let (start, end, _) = try Self.time(measured[index].tool, pid: target.pid)
                    if let before, let after = SchedulerStatistics(pid: target.pid, tid: target.pid) {
                        measured[index].notRunnable.append(after.notRunnable(since: before))
                    }
                    windows.append((index, start, end))
                    measured[index].wall.append(Double(end - start))
                }
            }
        } catch {
            target.send(SIGKILL)
            _ = try? target.wait(timeout: 10)
            throw error
        }
        target.send(GapRecorder.stopSignal)
        let status = try target.wait(timeout: 20)
        guard status == 0 else { throw BenchError("the gap target exited with \(status)") }
        let gaps = GapRecorder.gaps(in: target.standardOutput)
        for window in windows {
            let charged = Self.charged(gaps, start: window.start, end: window.end)
            measured[window.tool].stopped.append(charged.max() ?? 0)
            measured[window.tool].allGaps.append(charged.reduce(0, +))
        }
        let background = idle.map { Self.charged(gaps, start: $0.start, end: $0.end) }
        return (background.map { $0.max() ?? 0 }, background.map { $0.reduce(0, +) })
    }

    /// The gaps that began before `end` and ended after `start`, each counted from `start` at the earliest.
    private static func charged(_ gaps: [GapRecorder.Gap], start: UInt64, end: UInt64) -> [Double] {
        gaps.filter { $0.start <= end && $0.start + $0.length > start }
            .map { Double($0.start + $0.length - max($0.start, start)) }
    }

    /// Runs the tools against a demo stalled in `ChecksumEngine.crunchChecksums` and reads what the first run
    /// of each shows.
    private func measureOnDemo(_ measured: inout [Measured]) throws(BenchError) {
        measured = try products.withStalledDemo(lasting: 30) { demo throws(BenchError) in
            var results = measured
            try measure(on: demo, &results)
            return results
        }
    }

    /// Runs each tool its number of times against the stalled demo.
    private func measure(on demo: ChildProcess, _ measured: inout [Measured]) throws(BenchError) {
        for round in 0..<(measured.map(\.tool.demoRuns).max() ?? 0) {
            for index in measured.indices where round < measured[index].tool.demoRuns {
                MonotonicClock.sleep(seconds: Self.pause)
                let (start, end, output) = try Self.time(measured[index].tool, pid: demo.pid)
                measured[index].demoWall.append(Double(end - start))
                if round == 0 { measured[index].shows = StackShows(output: output) }
            }
        }
    }

    /// Runs `tool` once against `pid`, from before it is started to the moment it exits.
    private static func time(_ tool: StackTool, pid: pid_t) throws(BenchError) -> (UInt64, UInt64, String) {
        let start = MonotonicClock.now()
        let child = try ChildProcess(tool.arguments(pid: pid), environment: tool.environment)
        let (status, end) = try child.waitForExit(timeout: 60)
        guard status == 0 else {
            throw BenchError("\(child.arguments.joined(separator: " ")) exited with \(status): \(child.standardError)")
        }
        return (start, end, child.standardOutput + child.standardError)
    }

    /// Why the tools could not attach to the bench's children, if they cannot.
    private static func ptraceRestriction() -> String? {
        guard geteuid() != 0,
            let text = try? String(contentsOfFile: "/proc/sys/kernel/yama/ptrace_scope", encoding: .utf8),
            let scope = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), scope >= 1
        else { return nil }
        return "Yama ptrace_scope is \(scope): the tools may not attach to a process they did not start; run as root"
    }

    private static func skipped(_ reason: String) -> SectionReport {
        BenchOutput.progress("stack: skipped: \(reason)")
        return SectionReport(lines: ["stack: skipped (stallwatch stack vs eu-stack vs gdb): \(reason)"])
    }
}
