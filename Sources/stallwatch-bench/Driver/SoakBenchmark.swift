// The soak: ten thousand captures of one stalling workload, which must come out of it as it went in.
import Foundation

/// Runs the demo's `sleep` scenario under stallwatch with a 10 ms threshold and a sample every threshold, for
/// stalls of 5 s, so that every stall takes about 500 ptrace captures and the run about ten thousand; the same demo
/// runs bare first.
///
/// What must hold: the workload's exit status and what it printed (its own measurement of every stall: a 5 s
/// `usleep` keeps its 5 s however often the thread is stopped) are the bare run's; no capture leaves the thread
/// stopped (a stall would then never end, and the run would time out); the agent's resident memory stays flat after
/// the first quarter of the captures. stallwatch itself keeps every stall's samples until the end (the summary, the
/// JUnit file and the exports are made from them), about 2 KiB a sample: its growth is checked per capture, so a
/// leak in the capture path (the stop, the unwind, the image map, the names) would show above what it keeps.
struct SoakBenchmark {
    let products: BuildProducts

    static let stalls = 20
    static let stallSeconds = 5.0
    static let demoArguments = [
        "--scenario", "sleep", "--stalls", "\(stalls)", "--duration", "5s", "--period", "5.3s",
    ]
    static let watchArguments = ["--threshold", "10ms", "--count", "1", "--max-samples", "1000"]
    /// Growth after the warm-up that still counts as flat.
    static let flatLimitKiB = 1024
    /// What stallwatch may keep per capture after the warm-up: the sample it reports, with room to spare.
    static let perCaptureLimitKiB = 4.0
    static let interval = 1.0

    func run() throws(BenchError) -> SectionReport {
        BenchOutput.progress("soak: the demo bare, then under stallwatch for ~10,000 captures (about 4 minutes)")
        let bare = try ChildProcess([products.demo] + Self.demoArguments)
        let bareStatus = try bare.wait(timeout: 300)
        let bareTruth = GroundTruth.parse(bare.standardError)

        let watched = try ChildProcess(
            [products.stallwatch, "run", "--format", "json"] + Self.watchArguments + ["--", products.demo]
                + Self.demoArguments)
        let banner = try watched.waitForLine(fromStandardError: true, timeout: 10) {
            $0.hasPrefix("stallwatch-demo: scenario=")
        }
        guard let workload = banner.split(separator: " ").last.flatMap({ Int32($0.dropFirst("pid=".count)) }) else {
            throw BenchError("no pid in the demo's banner: \(banner)")
        }
        let processes = [("stallwatch CLI", watched.pid), ("demo with the agent", workload)]
        var series = processes.map { _ in [(at: Double, kibibytes: Int)]() }
        let start = MonotonicClock.now()
        while true {
            let elapsed = Double(MonotonicClock.now() - start) / 1e9
            let readings = processes.map { MemoryBenchmark.residentKiB(of: $0.1) }
            if readings[0] == nil { break }
            for (index, reading) in readings.enumerated() {
                if let reading { series[index].append((elapsed, reading.resident)) }
            }
            MonotonicClock.sleep(seconds: Self.interval)
        }
        let status = try watched.wait(timeout: 300)
        let truth = GroundTruth.parse(watched.standardError)
        let captures = ReportRecord.parse(watched.standardOutput).filter { $0.event == "stall" }
            .reduce(0) { $0 + ($1.samples?.count ?? 0) }

        let runSeconds = Double(Self.stalls) * 5.3
        let warmUp = runSeconds / 4
        var report = SectionReport()
        var table = ResultTable(
            "Soak: \(Self.stalls) stalls of a 5 s usleep under --threshold 10ms --count 1 --max-samples 1000 "
                + "(\(captures) ptrace captures); memory from \(Format.fixed(warmUp, 0)) s to the end",
            header: ["measure", "bare", "under stallwatch"])
        table.add(["exit status", "\(bareStatus)", "\(status)"])
        table.add(["stalls the demo measured", "\(bareTruth.count)", "\(truth.count)"])
        let lengths = truth.map(\.durationMilliseconds)
        let bareLengths = bareTruth.map(\.durationMilliseconds)
        table.add([
            "its 5 s sleeps, shortest – longest",
            "\(Format.fixed(bareLengths.min() ?? 0, 1)) – \(Format.fixed(bareLengths.max() ?? 0, 1)) ms",
            "\(Format.fixed(lengths.min() ?? 0, 1)) – \(Format.fixed(lengths.max() ?? 0, 1)) ms",
        ])
        let settledCaptures = Double(captures) * (1 - warmUp / runSeconds)
        for ((name, _), samples) in zip(processes, series) {
            let settled = samples.filter { $0.at >= warmUp }.map(\.kibibytes)
            let growth = (settled.last ?? 0) - (settled.first ?? 0)
            let perCapture = settledCaptures > 0 ? Double(growth) / settledCaptures : 0
            table.add([
                "\(name): RSS after warm-up, first → last (per capture)", "",
                "\(Format.mebibytes(settled.first ?? 0)) → \(Format.mebibytes(settled.last ?? 0))"
                    + " (\(Format.fixed(perCapture, 2)) KiB)",
            ])
            if name == "stallwatch CLI" {
                report.targets.append(
                    TargetCheck(
                        "soak: stallwatch CLI RSS growth per capture after warm-up (it keeps the samples)",
                        measured: "\(Format.fixed(perCapture, 2)) KiB",
                        target: "≤ \(Format.fixed(Self.perCaptureLimitKiB, 1)) KiB",
                        met: perCapture <= Self.perCaptureLimitKiB && settled.count >= 2,
                        limit: "memory kept per capture beyond its sample"))
            } else {
                report.targets.append(
                    TargetCheck(
                        "soak: \(name) RSS growth after warm-up", measured: Format.mebibytes(growth),
                        target: "< \(Format.mebibytes(Self.flatLimitKiB))",
                        met: growth < Self.flatLimitKiB && settled.count >= 2, limit: "memory kept per capture"))
            }
        }
        report.tables.append(table)
        report.targets.append(
            TargetCheck(
                "soak: captures", measured: "\(captures)", target: "≥ 9,000", met: captures >= 9_000,
                limit: "captures missed"))
        report.targets.append(
            TargetCheck(
                "soak: the workload's exit status and stalls", measured: "\(status), \(truth.count) stalls",
                target: "\(bareStatus), \(bareTruth.count) stalls",
                met: status == bareStatus && truth.count == bareTruth.count, limit: "the workload disturbed"))
        let shortest = lengths.min() ?? 0
        report.targets.append(
            TargetCheck(
                "soak: the 5 s sleeps under ~500 captures each", measured: "\(Format.fixed(shortest, 1)) ms shortest",
                target: "≥ 4,990 ms", met: shortest >= 4_990 && !lengths.isEmpty, limit: "sleeps cut short"))
        return report
    }
}
