// The capture section's library mode beside `stallwatch run`: how long each sample stops the stalled thread, whether
// a 500 ms sleep keeps its 500 ms, and what the capture helper costs in memory.
import Foundation

/// Stalls in `usleep(500 ms)` five times under `stallwatch run` (the demo's sleep scenario), in an app that embeds
/// `StallMonitor` with its capture helper (`stallwatch-bench-app`), and in the same app with signal capture.
struct LibraryModeBenchmark {
    let products: BuildProducts

    static let sleeps = 5
    static let sleepNanoseconds = 500_000_000.0
    /// A sleep that a capture cut short ends well before this; one the scheduler merely woke late does not.
    static let keptTolerance = 10_000_000.0
    static let stoppedTarget = 200_000.0

    /// One way of watching: the app's sleep lengths and the samples' stops, in nanoseconds.
    private struct Outcome {
        let name: String
        let slept: [Double]
        let stopped: [Double]
        var helperResidentKiB: Int?
    }

    /// What `stallwatch-bench-app` prints.
    private struct AppRecord: Decodable {
        let sleptNanoseconds: [Double]
        let stoppedNanoseconds: [Double]
        let methods: [String]
        let helperResidentKiB: Int
    }

    func run() throws(BenchError) -> SectionReport {
        BenchOutput.progress("capture: library mode beside stallwatch run, \(Self.sleeps) sleeps of 500 ms each")
        let outcomes = [try underRun(), try inApp(helper: true), try inApp(helper: false)]
        var table = ResultTable(
            "Capture: library mode beside stallwatch run (\(Self.sleeps) stalls in usleep(500 ms), threshold 50 ms,"
                + " count 2)",
            header: [
                "watched by", "thread stopped, warm median", "warm p95", "shortest sleep", "sleeps kept",
                "helper RSS",
            ])
        for outcome in outcomes {
            let warm = Array(outcome.stopped.dropFirst())
            let kept = outcome.slept.filter { $0 >= Self.sleepNanoseconds - Self.keptTolerance }.count
            table.add([
                outcome.name, warm.isEmpty ? "-" : Format.milliseconds(warm.median),
                warm.isEmpty ? "-" : Format.milliseconds(warm.percentile(95)),
                Format.milliseconds(outcome.slept.min() ?? 0), "\(kept)/\(outcome.slept.count)",
                outcome.helperResidentKiB.map(Format.mebibytes) ?? "-",
            ])
        }
        var report = SectionReport(tables: [table])
        let helper = outcomes[1]
        let stoppedWarm = Array(helper.stopped.dropFirst()).median
        let allKept = helper.slept.allSatisfy { $0 >= Self.sleepNanoseconds - Self.keptTolerance }
        report.targets += [
            TargetCheck(
                "library mode: thread stopped, warm median", measured: Format.milliseconds(stoppedWarm),
                target: "≤ 0.200 ms", met: stoppedWarm <= Self.stoppedTarget),
            TargetCheck(
                "library mode: a 500 ms sleep keeps its length",
                measured: Format.milliseconds(helper.slept.min() ?? 0), target: "≥ 490 ms", met: allKept),
        ]
        return report
    }

    private func underRun() throws(BenchError) -> Outcome {
        let child = try ChildProcess([
            products.stallwatch, "run", "--format", "json", "--threshold", "50ms", "--count", "2", "--",
            products.demo, "--scenario", "sleep", "--stalls", "\(Self.sleeps)", "--duration", "500ms",
            "--period", "900ms",
        ])
        let status = try child.wait(timeout: 60)
        guard status == 0 else { throw BenchError("stallwatch run stallwatch-demo exited with \(status)") }
        let records = ReportRecord.parse(child.standardOutput).filter { $0.event == "stall" }
        return Outcome(
            name: "stallwatch run",
            slept: GroundTruth.parse(child.standardError).map { $0.durationMilliseconds * 1e6 },
            stopped: records.flatMap { $0.samples ?? [] }.compactMap(\.stoppedMs).map { $0 * 1e6 })
    }

    private func inApp(helper: Bool) throws(BenchError) -> Outcome {
        let child = try ChildProcess(
            [products.benchApp, "--sleeps", "\(Self.sleeps)"] + (helper ? ["--helper", products.stallwatch] : []))
        let status = try child.wait(timeout: 60)
        guard status == 0,
            let line = child.standardOutput.split(separator: "\n").last,
            let record = try? JSONDecoder().decode(AppRecord.self, from: Data(line.utf8))
        else { throw BenchError("stallwatch-bench-app exited with \(status): \(child.standardError)") }
        let expected = helper ? "ptrace" : "signal"
        guard record.methods == [expected] else {
            throw BenchError("stallwatch-bench-app captured with \(record.methods), not \(expected)")
        }
        return Outcome(
            name: helper ? "StallMonitor, helper (ptrace)" : "StallMonitor, signal fallback",
            slept: record.sleptNanoseconds, stopped: record.stoppedNanoseconds,
            helperResidentKiB: helper ? record.helperResidentKiB : nil)
    }
}
