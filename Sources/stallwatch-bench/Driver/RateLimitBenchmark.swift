// The capture section's `--rate-limit` table: how long the stalled target is stopped for a stall reported in full and
// for one the rate limit shortened, by the target's own clock.
import Foundation

/// Runs the gap target's spins (each a stall in one function) under `stallwatch run --rate-limit 5/1h`: the first five
/// reported in full (a sample at detection and one per 50 ms threshold), the rest shortened (the sample that names
/// their fingerprint, no more).
///
/// Each stall is charged with the gaps in the target's own clock (``GapRecorder``) during its captures: a window from
/// its detection (which its first capture follows; a suppressed stall keeps no sample to say when) and from each later
/// sample's capture (`capturedAfterMs`), each ``window`` long. Counting only those windows leaves out most of what a
/// loaded machine takes from the spin the rest of the stall (preemption, a VM's stolen time).
struct RateLimitBenchmark {
    let products: BuildProducts

    static let stalls = 14
    static let fullReports = 5
    static let spinSeconds = 0.4
    /// Long enough for a capture that waits for the collector to be scheduled, short beside the 50 ms threshold.
    static let window = 5_000_000.0
    /// A suppressed stall's one capture against a full stall's six or so: a third leaves room for the noise every
    /// capture window shares on a loaded machine.
    static let ratioTarget = 1.0 / 3

    func run() throws(BenchError) -> SectionReport {
        BenchOutput.progress("capture: --rate-limit \(Self.fullReports)/1h over \(Self.stalls) stalls of one culprit")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallwatch-bench-\(getpid()).ndjson")
        defer { try? FileManager.default.removeItem(at: output) }
        // At a higher priority (root; otherwise nice says so and runs it as it is): on a machine shared with other
        // jobs, their preemption of the spin would otherwise drown a single capture's stop.
        let child = try ChildProcess([
            "/usr/bin/nice", "-n", "-10", products.stallwatch, "run", "--format", "json", "--output", output.path,
            "--threshold", "50ms", "--count",
            "2", "--rate-limit", "\(Self.fullReports)/1h", "--", products.bench, "gap-target", "--seconds",
            "\(Self.spinSeconds)", "--stalls", "\(Self.stalls)",
        ])
        let status = try child.wait(timeout: 60)
        let stalls = ReportRecord.parse((try? String(contentsOf: output, encoding: .utf8)) ?? "")
            .filter { $0.event == "stall" }
        guard status == 0, stalls.count == Self.stalls else {
            throw BenchError(
                "stallwatch run gap-target exited with \(status), \(stalls.count) stalls: \(child.standardError)")
        }
        let gaps = GapRecorder.gaps(in: child.standardOutput)
        func stopped(from start: Double) -> Double {
            gaps.reduce(0.0) { sum, gap in
                let (from, to) = (Double(gap.start), Double(gap.start + gap.length))
                return sum + max(0, min(to, start + Self.window) - max(from, start))
            }
        }
        let charged = stalls.map { stall -> Double in
            let start = (stall.startMonotonicMs ?? 0) * 1e6
            // Both kinds from the detection: what the watcher and the collector do before the first stop is the same.
            let captures =
                [stall.detectedAfterMs ?? 0] + (stall.samples ?? []).dropFirst().compactMap(\.capturedAfterMs)
            return captures.map { stopped(from: start + $0 * 1e6) }.reduce(0, +)
        }
        // The first stall's captures are cold (images opened, first symbolication): left out of the full ones.
        let warm = Array(zip(stalls, charged).dropFirst())
        let full = warm.filter { $0.0.suppressed != true }
        let short = warm.filter { $0.0.suppressed == true }.map(\.1)
        var table = ResultTable(
            "Capture: --rate-limit \(Self.fullReports)/1h over \(Self.stalls) stalls of \(Int(Self.spinSeconds * 1000))"
                + " ms in one function (the gap target, threshold 50 ms, count 2): the target's own clock stopped per"
                + " stall, in the \(Int(Self.window / 1e6)) ms after its detection and after each later capture began",
            header: ["stall", "stalls", "captures", "target stopped, median", "min", "max", "sampler's clock, median"])
        table.add([
            "full report (warm)", "\(full.count)",
            "\(Int(full.map { Double($0.0.samples?.count ?? 0) }.median))", Format.milliseconds(full.map(\.1).median),
            Format.milliseconds(full.map(\.1).min() ?? 0), Format.milliseconds(full.map(\.1).max() ?? 0),
            Format.milliseconds(full.map { ($0.0.samples ?? []).compactMap(\.stoppedMs).reduce(0, +) * 1e6 }.median),
        ])
        table.add([
            "suppressed", "\(short.count)", "1", Format.milliseconds(short.median),
            Format.milliseconds(short.min() ?? 0), Format.milliseconds(short.max() ?? 0), "- (no sample kept)",
        ])
        var report = SectionReport(tables: [table])
        let ratio = full.isEmpty ? 1 : short.median / max(1, full.map(\.1).median)
        report.targets.append(
            TargetCheck(
                "--rate-limit: target stopped per suppressed stall ÷ per full stall, medians",
                measured: Format.fixed(ratio, 2), target: "≤ 0.33",
                met: short.count == Self.stalls - Self.fullReports && ratio <= Self.ratioTarget,
                limit: "a suppressed stall's one capture, against a full one's capture per threshold"))
        return report
    }
}
