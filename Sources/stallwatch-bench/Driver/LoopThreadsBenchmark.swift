// `--thread`'s costs: a tight run loop on a secondary thread, watched against bare (beside the main loop's same
// ratio), and the collector's CPU while it watches 16 idle epoll loop threads from /proc.
import Foundation

struct LoopThreadsBenchmark {
    let products: BuildProducts
    let rounds: Int
    let seconds: Double

    /// How long the collector watches the idle loops.
    static let watchSeconds = 10.0
    /// The collector's CPU while watching 16 idle loops, as a share of one CPU.
    static let collectorTarget = 0.02
    static let ratioTarget = 0.97

    func run() throws(BenchError) -> SectionReport {
        var report = SectionReport()
        try measureRatios(into: &report)
        try measureCollector(into: &report)
        return report
    }

    /// The tight loop on the main thread and on a thread of its own, bare and watched, in alternating rounds.
    private func measureRatios(into report: inout SectionReport) throws(BenchError) {
        let workloads: [(BenchCommand.Workload, [String])] = [
            (.tightLoop, []), (.tightLoopThread, ["--thread", TightLoop.threadName]),
        ]
        var ratios: [BenchCommand.Workload: [Double]] = [:]
        var bare: [BenchCommand.Workload: [Double]] = [:]
        /// What watching adds to one iteration, in CPU nanoseconds: comparable between loops whose bare iterations
        /// differ (the main loop's also services the main queue's port).
        var added: [BenchCommand.Workload: [Double]] = [:]
        for round in 1...rounds {
            for (workload, selector) in workloads {
                BenchOutput.progress("loops: round \(round)/\(rounds), \(workload.rawValue)")
                let watchedFirst = round.isMultiple(of: 2)
                var pair: [Bool: WorkloadResult] = [:]
                for watched in watchedFirst ? [true, false] : [false, true] {
                    pair[watched] = try measure(workload, watched ? selector : nil)
                }
                guard let plain = pair[false], let watched = pair[true] else { continue }
                ratios[workload, default: []].append(watched.perCPUSecond / plain.perCPUSecond)
                bare[workload, default: []].append(plain.perCPUSecond)
                added[workload, default: []].append(1e9 / watched.perCPUSecond - 1e9 / plain.perCPUSecond)
            }
        }
        var table = ResultTable(
            "A tight run loop watched on a secondary thread (--thread) and on the main thread: \(rounds) alternating"
                + " rounds of \(Format.fixed(seconds, 1)) s runs; throughput per second of the loop thread's CPU;"
                + " watched/bare = median of the per-round ratios [lowest–highest]",
            header: ["loop", "bare", "watched/bare", "added per iteration", "target", "result"])
        for (workload, _) in workloads {
            let values = ratios[workload] ?? []
            let measured =
                "\(Format.fixed(values.median, 2)) [\(Format.fixed(values.min() ?? 0, 2))–"
                + "\(Format.fixed(values.max() ?? 0, 2))]"
            let name = workload == .tightLoop ? "main thread" : "secondary thread (\(TightLoop.threadName))"
            let check = TargetCheck(
                "tight loop on the \(name), watched/bare", measured: measured,
                target: "≥ \(Format.fixed(Self.ratioTarget, 2))", met: values.median >= Self.ratioTarget,
                withinNoise: (values.min() ?? 0) < Self.ratioTarget && Self.ratioTarget <= (values.max() ?? 0),
                limit: "CoreFoundation's observer dispatch on every observed transition, as on the main loop; a"
                    + " secondary thread's bare iteration is cheaper (no main-queue port), so the same added"
                    + " nanoseconds weigh more")
            table.add([
                name, Format.rate((bare[workload] ?? []).median), measured,
                "\(Format.fixed((added[workload] ?? []).median, 0)) ns", check.target, check.verdict,
            ])
            report.targets.append(check)
            report.lines.append("\(workload.rawValue) throughput ratio: \(Format.fixed(values.median, 2))")
        }
        report.tables.append(table)
    }

    /// One run, bare or under `stallwatch run --thread SELECTOR`; a watched run must really have watched a loop.
    private func measure(_ workload: BenchCommand.Workload, _ selector: [String]?) throws(BenchError)
        -> WorkloadResult
    {
        var command = [products.bench, workload.rawValue, "--seconds", "\(seconds)"]
        let reports = NSTemporaryDirectory() + "stallwatch-bench-loops-\(getpid()).ndjson"
        if let selector {
            try? FileManager.default.removeItem(atPath: reports)
            command =
                [products.stallwatch, "run", "--format", "json", "--output", reports] + selector + ["--"] + command
        }
        let child = try ChildProcess(command)
        let status = try child.wait(timeout: seconds + 30)
        guard status == 0, let result = WorkloadResult(output: child.standardOutput) else {
            throw BenchError("\(command.joined(separator: " ")) exited with \(status): \(child.standardError)")
        }
        if selector != nil {
            defer { try? FileManager.default.removeItem(atPath: reports) }
            let records = (try? String(contentsOfFile: reports, encoding: .utf8)).map(ReportRecord.parse) ?? []
            guard let summary = records.first(where: { $0.event == "summary" }), summary.watchedPids?.isEmpty == false
            else { throw BenchError("stallwatch did not watch \(workload.rawValue): \(child.standardError)") }
        }
        return result
    }

    /// stallwatch's CPU (user + system, from the reaped child's rusage) while attached to 16 idle epoll loops, and,
    /// for what any session costs (start-up, preflight, the poll loop), while attached with `--thread main` alone.
    private func measureCollector(into report: inout SectionReport) throws(BenchError) {
        let workload = try ChildProcess(
            [products.bench, BenchCommand.Workload.idleLoops.rawValue, "--seconds", "\(2 * Self.watchSeconds + 10)"])
        defer {
            workload.send(SIGKILL)
            _ = try? workload.wait(timeout: 5)
        }
        // Until every loop has named itself and rests in epoll_wait.
        usleep(500_000)
        BenchOutput.progress("loops: the collector watching \(IdleLoops.threadCount) idle epoll threads")
        let all = try attachCPU(to: workload.pid, selector: "NIO-ELT-*")
        BenchOutput.progress("loops: the collector watching the main thread alone")
        let mainOnly = try attachCPU(to: workload.pid, selector: "main")
        let share = all / Self.watchSeconds
        let perThread = max(0, all - mainOnly) / Self.watchSeconds / Double(IdleLoops.threadCount)
        var table = ResultTable(
            "The collector watching \(IdleLoops.threadCount) idle epoll loop threads from /proc"
                + " (stallwatch attach --thread 'NIO-ELT-*', \(Int(Self.watchSeconds)) s, default threshold), beside"
                + " the same session with --thread main: CPU time of the whole stallwatch process, start-up included",
            header: [
                "CPU, 16 threads", "CPU, main only", "share of one CPU", "per thread and second", "target", "result",
            ])
        let check = TargetCheck(
            "collector CPU watching \(IdleLoops.threadCount) idle epoll threads",
            measured: "\(Format.fixed(share * 100, 2)) %", target: "≤ \(Format.fixed(Self.collectorTarget * 100, 0)) %",
            met: share <= Self.collectorTarget,
            limit: "two /proc reads per thread and threshold, and the task list read again every 250 ms")
        table.add([
            "\(Format.fixed(all * 1000, 0)) ms", "\(Format.fixed(mainOnly * 1000, 0)) ms", check.measured,
            "\(Format.fixed(perThread * 1e6, 0)) µs", check.target, check.verdict,
        ])
        report.tables.append(table)
        report.targets.append(check)
        report.lines.append("collector CPU share watching idle loops: \(Format.fixed(share, 4))")
    }

    /// CPU seconds of one `stallwatch attach --thread SELECTOR` session of ``watchSeconds``.
    private func attachCPU(to pid: pid_t, selector: String) throws(BenchError) -> Double {
        let before = ChildProcess.childrenCPU()
        let attach = try ChildProcess([
            products.stallwatch, "attach", "--thread", selector, "--format", "json", "--duration",
            "\(Int(Self.watchSeconds))s", String(pid),
        ])
        let status = try attach.wait(timeout: Self.watchSeconds + 30)
        let cpu = ChildProcess.childrenCPU() - before
        // With the loops, every one must have been watched (none "not watched"); the main thread never is one.
        guard status == 0, ReportRecord.parse(attach.standardOutput).contains(where: { $0.event == "summary" }),
            selector == "main" || !attach.standardError.contains("not watched")
        else { throw BenchError("stallwatch attach exited with \(status): \(attach.standardError)") }
        return cpu
    }
}
