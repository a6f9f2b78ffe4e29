// `--source kernel`'s costs: requests an epoll server serves under saturating loopback load, followed by the kernel
// trace against bare (paired rounds), false stalls under that load, and the collector's CPU following 1 and many
// loop threads.
import Foundation

struct KernelSourceBenchmark {
    let products: BuildProducts
    let rounds: Int

    /// Seconds of load per run.
    static let loadSeconds = 5.0
    static let clients = 4
    static let ratioTarget = 0.97
    /// The idle loops of the scale measurement.
    static let manyThreads = 5000
    static let watchSeconds = 10.0
    static let collectorTarget = 0.10

    func run() throws(BenchError) -> SectionReport {
        var report = SectionReport()
        guard getuid() == 0 else {
            report.lines.append("kernel: skipped, loading the trace program needs root")
            return report
        }
        let server = try Self.buildServer()
        try measureThroughput(server, into: &report)
        try KernelLoadRunBenchmark(products: products, server: server).run(into: &report)
        try measureCollector(server, into: &report)
        return report
    }

    /// Tests/Fixtures/Programs/loop_server.c, built with the system's cc into a temporary directory.
    static func buildServer() throws(BenchError) -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "Tests/Fixtures/Programs/loop_server.c"
            ).path
        let output = NSTemporaryDirectory() + "stallwatch-bench-loop-server-\(getpid())"
        let compiler = try ChildProcess(["/usr/bin/cc", "-O2", "-g", "-pthread", source, "-o", output])
        guard try compiler.wait(timeout: 60) == 0 else { throw BenchError("cc: \(compiler.standardError)") }
        return output
    }

    /// Paired rounds, bare and watched in alternating order, for handlers of 200 µs of work and for empty ones.
    private func measureThroughput(_ server: String, into report: inout SectionReport) throws(BenchError) {
        var table = ResultTable(
            "An epoll server on loopback under saturating keep-alive load (\(Self.clients) clients, "
                + "\(Int(Self.loadSeconds)) s runs), followed by the kernel trace (stallwatch run --thread epoll-loop"
                + " --source kernel) against bare: \(rounds) paired rounds; requests served per second;"
                + " watched/bare = median of the per-round ratios [lowest–highest]",
            header: ["handler", "bare", "watched", "watched/bare", "false stalls", "target", "result"])
        var falseStalls = 0
        for workMicroseconds in [200, 0] {
            var ratios: [Double] = []
            var bare: [Double] = []
            var watched: [Double] = []
            for round in 1...rounds {
                BenchOutput.progress("kernel: round \(round)/\(rounds), handlers of \(workMicroseconds) µs")
                for isWatched in round.isMultiple(of: 2) ? [true, false] : [false, true] {
                    let (served, stalls) = try serve(server, work: workMicroseconds, watched: isWatched)
                    if isWatched {
                        watched.append(served)
                        falseStalls += stalls
                    } else {
                        bare.append(served)
                    }
                }
                if let last = watched.last, let plain = bare.last { ratios.append(last / plain) }
            }
            let measured =
                "\(Format.fixed(ratios.median, 3)) [\(Format.fixed(ratios.min() ?? 0, 3))–"
                + "\(Format.fixed(ratios.max() ?? 0, 3))]"
            let name = workMicroseconds == 0 ? "empty" : "\(workMicroseconds) µs of work"
            if workMicroseconds > 0 {
                let check = TargetCheck(
                    "epoll server with \(name) per request, kernel trace/bare", measured: measured,
                    target: "≥ \(Format.fixed(Self.ratioTarget, 2))", met: ratios.median >= Self.ratioTarget,
                    withinNoise: (ratios.min() ?? 0) < Self.ratioTarget && Self.ratioTarget <= (ratios.max() ?? 0),
                    limit: "every syscall of the machine takes the tracepoint's slow path and runs the program's test")
                table.add([
                    name, Format.rate(bare.median), Format.rate(watched.median), measured, "\(falseStalls)",
                    check.target, check.verdict,
                ])
                report.targets.append(check)
            } else {
                table.add([
                    name, Format.rate(bare.median), Format.rate(watched.median), measured, "\(falseStalls)", "", "",
                ])
            }
            report.lines.append("kernel source throughput ratio, \(name): \(Format.fixed(ratios.median, 3))")
        }
        report.targets.append(
            TargetCheck(
                "false stalls of the loaded loops followed by the kernel trace", measured: "\(falseStalls)",
                target: "0", met: falseStalls == 0))
        report.tables.append(table)
    }

    /// One run: requests per second the server reports, and (watched) the stalls stallwatch reported.
    private func serve(_ server: String, work: Int, watched: Bool) throws(BenchError) -> (Double, Int) {
        var command = [server, "\(Self.loadSeconds)", "\(Self.clients)", "work:\(work)"]
        if watched {
            command =
                [
                    products.stallwatch, "run", "--thread", "epoll-loop", "--source", "kernel", "--format", "json",
                    "--",
                ] + command
        }
        let child = try ChildProcess(command)
        let status = try child.wait(timeout: Self.loadSeconds + 30)
        let line = child.standardError.split(separator: "\n").first { $0.hasPrefix("loop_server: served=") }
        guard status == 0, let served = line?.split(separator: "=").last.flatMap({ Double($0) }) else {
            throw BenchError("\(command.joined(separator: " ")) exited with \(status): \(child.standardError)")
        }
        let records = ReportRecord.parse(child.standardOutput)
        if watched, !records.contains(where: { $0.event == "summary" }) {
            throw BenchError("stallwatch wrote no summary: \(child.standardError)")
        }
        return (served, records.filter { $0.event == "stall" }.count)
    }

    /// stallwatch's CPU attached to one loaded loop and to the same server with many idle loops beside it (each waking
    /// once a second, as a loop with a timer does): a session of ``watchSeconds`` and one twice as long, whose
    /// difference is the watch without its start-up.
    private func measureCollector(_ server: String, into report: inout SectionReport) throws(BenchError) {
        var table = ResultTable(
            "The collector following loop threads through the kernel trace (stallwatch attach --source kernel,"
                + " default threshold), as a share of one CPU: a whole \(Int(Self.watchSeconds)) s session, start-up"
                + " included, and the watch alone (a \(Int(2 * Self.watchSeconds)) s session less the"
                + " \(Int(Self.watchSeconds)) s one)",
            header: ["threads followed", "whole session", "watching", "target", "result"])
        for (selector, idle) in [("epoll-loop", 0), ("all", Self.manyThreads)] {
            let workload = try ChildProcess(
                [server, "\(3 * Self.watchSeconds + 10)", idle == 0 ? "\(Self.clients)" : "1", "idle:\(idle)"])
            defer {
                workload.send(SIGKILL)
                _ = try? workload.wait(timeout: 5)
            }
            // Until every idle loop rests in its wait.
            MonotonicClock.sleep(seconds: idle == 0 ? 0.5 : 3)
            BenchOutput.progress(
                "kernel: the collector following \(idle == 0 ? "one loaded loop" : "\(idle) idle loops")")
            let short = try attachCPU(selector, pid: workload.pid, seconds: Self.watchSeconds)
            let long = try attachCPU(selector, pid: workload.pid, seconds: 2 * Self.watchSeconds)
            let whole = short / Self.watchSeconds
            let watching = max(0, long - short) / Self.watchSeconds
            let name = idle == 0 ? "1 (loaded)" : "\(idle + 2) (\(idle) idle)"
            let check = TargetCheck(
                "collector CPU following \(name) loop threads", measured: "\(Format.fixed(watching * 100, 1)) %",
                target: "≤ \(Format.fixed(Self.collectorTarget * 100, 0)) %", met: watching <= Self.collectorTarget,
                limit: "one batch read of every thread's record per wake, the moved ones judged, the task list read"
                    + " every 250 ms")
            table.add([name, "\(Format.fixed(whole * 100, 1)) %", check.measured, check.target, check.verdict])
            report.targets.append(check)
        }
        report.tables.append(table)
    }

    /// CPU seconds of one `stallwatch attach --thread SELECTOR --source kernel` session of `seconds`.
    private func attachCPU(_ selector: String, pid: pid_t, seconds: Double) throws(BenchError) -> Double {
        let before = ChildProcess.childrenCPU()
        let attach = try ChildProcess([
            products.stallwatch, "attach", "--thread", selector, "--source", "kernel", "--format", "json",
            "--duration", "\(Int(seconds))s", String(pid),
        ])
        let status = try attach.wait(timeout: seconds + 60)
        guard status == 0 else { throw BenchError("stallwatch attach exited with \(status): \(attach.standardError)") }
        return ChildProcess.childrenCPU() - before
    }
}
