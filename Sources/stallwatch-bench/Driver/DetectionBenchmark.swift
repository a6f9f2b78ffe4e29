// Item 2: how soon stallwatch declares a stall and how exactly it measures it, against the demo's ground truth.
import Foundation

/// Runs `stallwatch demo --format json` for every stalling scenario and pairs each report with the demo's
/// own measurement of the same stall.
///
/// Detection latency is the report's `startMonotonicMs + detectedAfterMs` minus the demo's `start_ns` (both on
/// CLOCK_MONOTONIC): when a reader of the report could first know, counted from when the stall really began.
struct DetectionBenchmark {
    let products: BuildProducts

    static let scenarios = ["cpu", "sleep", "main-queue", "source", "mutex", "vdso", "observer"]
    static let stallsPerScenario = 5
    static let thresholdMilliseconds = 80.0
    static let count = 3
    static var latencyTarget: Double { thresholdMilliseconds * Double(count) + 20 }
    static let durationErrorTarget = 0.02

    /// One stall as both sides saw it.
    private struct Pair {
        let truth: GroundTruth
        let record: ReportRecord

        var latencyMilliseconds: Double {
            (record.startMonotonicMs ?? 0) + (record.detectedAfterMs ?? 0) - Double(truth.startNanoseconds) / 1e6
        }

        var durationError: Double {
            abs((record.durationMs ?? 0) - truth.durationMilliseconds) / truth.durationMilliseconds
        }

        var culpritNamed: Bool { record.culprit?.symbol?.contains(truth.culprit) ?? false }
    }

    func run() throws(BenchError) -> SectionReport {
        var table = ResultTable(
            "Detection: \(Self.stallsPerScenario) stalls of 500 ms per scenario, --threshold "
                + "\(Int(Self.thresholdMilliseconds))ms --count \(Self.count), against the demo's ground truth",
            header: [
                "scenario", "stalls found", "latency p50", "latency p95", "duration error max", "culprit named",
                "stopped median",
            ])
        var all: [Pair] = []
        var mutexRecords: [ReportRecord] = []
        var expected = 0
        var extra = 0
        for scenario in Self.scenarios {
            BenchOutput.progress("detection: \(scenario)")
            let (truths, records) = try runDemo(scenario)
            let pairs = Self.pair(truths, records)
            expected += truths.count
            extra += records.count - pairs.count
            all += pairs
            if scenario == "mutex" { mutexRecords = records }
            table.add(row(scenario, pairs, expected: truths.count))
        }
        table.add(row("all", all, expected: expected))

        let latencyP95 = all.map(\.latencyMilliseconds).percentile(95)
        let errors = all.map(\.durationError)
        var report = SectionReport(tables: [table])
        report.lines.append(
            "detection latency p50/p95: \(Format.fixed(all.map(\.latencyMilliseconds).median, 1))"
                + "/\(Format.fixed(latencyP95, 1)) ms; reports without a demo stall: \(extra)")
        report.targets += [
            TargetCheck(
                "stalls detected", measured: "\(all.count)/\(expected), \(extra) spurious", target: "all, 0 spurious",
                met: all.count == expected && extra == 0, limit: "see the detection table"),
            TargetCheck(
                "detection latency p95", measured: Format.fixed(latencyP95, 1) + " ms",
                target: "≤ \(Int(Self.latencyTarget)) ms", met: latencyP95 <= Self.latencyTarget,
                limit: "the watcher thread's wake-up latency on a busy machine"),
            TargetCheck(
                "duration error p95", measured: Format.percent(errors.percentile(95)),
                target: "≤ \(Format.percent(Self.durationErrorTarget))",
                met: errors.percentile(95) <= Self.durationErrorTarget, limit: "the end probe's timing"),
            TargetCheck(
                "duration error max", measured: Format.percent(errors.max() ?? 0),
                target: "≤ \(Format.percent(Self.durationErrorTarget))",
                met: (errors.max() ?? 0) <= Self.durationErrorTarget, limit: "the end probe's timing"),
        ]
        let blockers = try BlockerBenchmark(products: products).run(demoMutex: mutexRecords)
        report.tables += blockers.tables
        report.targets += blockers.targets
        let peers = try PeerBenchmark(products: products).run()
        report.tables += peers.tables
        report.targets += peers.targets
        return report
    }

    private func runDemo(_ scenario: String) throws(BenchError) -> ([GroundTruth], [ReportRecord]) {
        let child = try ChildProcess([
            products.stallwatch, "demo", "--scenario", scenario, "--format", "json",
            "--threshold", "\(Int(Self.thresholdMilliseconds))ms", "--count", "\(Self.count)",
            "--", "--stalls", "\(Self.stallsPerScenario)", "--duration", "500ms", "--period", "900ms",
        ])
        let status = try child.wait(timeout: 60)
        guard status == 0 else { throw BenchError("stallwatch demo --scenario \(scenario) exited with \(status)") }
        let records = ReportRecord.parse(child.standardOutput).filter { $0.event == "stall" }
        return (GroundTruth.parse(child.standardError), records)
    }

    /// Pairs each ground-truth stall with the report whose start is nearest, within 50 ms.
    private static func pair(_ truths: [GroundTruth], _ records: [ReportRecord]) -> [Pair] {
        truths.compactMap { truth in
            let start = Double(truth.startNanoseconds) / 1e6
            let nearest = records.min {
                abs(($0.startMonotonicMs ?? 0) - start) < abs(($1.startMonotonicMs ?? 0) - start)
            }
            guard let nearest, abs((nearest.startMonotonicMs ?? 0) - start) < 50 else { return nil }
            return Pair(truth: truth, record: nearest)
        }
    }

    private func row(_ name: String, _ pairs: [Pair], expected: Int) -> [String] {
        let latencies = pairs.map(\.latencyMilliseconds)
        let stopped = pairs.flatMap { $0.record.samples ?? [] }.compactMap(\.stoppedMs)
        return [
            name, "\(pairs.count)/\(expected)", Format.fixed(latencies.median, 1) + " ms",
            Format.fixed(latencies.percentile(95), 1) + " ms", Format.percent(pairs.map(\.durationError).max() ?? 0),
            "\(pairs.filter(\.culpritNamed).count)/\(pairs.count)",
            stopped.isEmpty ? "–" : Format.fixed(stopped.median, 3) + " ms",
        ]
    }
}
