// The capture section's `--rate-limit` table: how long the stalled target is stopped for a stall reported in full and
// for one the rate limit shortened, by the target's own account, beside the same spins unwatched.
import Foundation

/// Runs the gap target's spins (each a stall in one function) under `stallwatch run --rate-limit 3/1h`: the first
/// three reported in full (a sample at detection and one per 50 ms threshold), the rest shortened (the sample that
/// names their fingerprint, no more); and the same spins bare.
///
/// Each spin is charged with the time its thread was neither on a CPU nor waiting for one (``GapRecorder``): the
/// captures' stops, and what the machine takes from the spin beyond preemption (a VM's stolen time), which the bare
/// row measures.
struct RateLimitBenchmark {
    let products: BuildProducts

    static let stalls = 12
    static let fullReports = 3
    static let spinSeconds = 0.4
    /// One warm sample, as the capture table's per-sample target.
    static let suppressedTarget = 200_000.0

    func run() throws(BenchError) -> SectionReport {
        BenchOutput.progress("capture: --rate-limit \(Self.fullReports)/1h over \(Self.stalls) stalls of one culprit")
        let spins = [products.bench, "gap-target", "--seconds", "\(Self.spinSeconds)", "--stalls", "\(Self.stalls)"]
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallwatch-bench-\(getpid()).ndjson")
        defer { try? FileManager.default.removeItem(at: output) }
        let watched = try ChildProcess(
            [
                products.stallwatch, "run", "--format", "json", "--output", output.path, "--threshold", "50ms",
                "--count", "2", "--rate-limit", "\(Self.fullReports)/1h", "--",
            ] + spins)
        let status = try watched.wait(timeout: 60)
        let stalls = ReportRecord.parse((try? String(contentsOf: output, encoding: .utf8)) ?? "")
            .filter { $0.event == "stall" }
        // Stall i is spin i.
        let stopped = GapRecorder.spinStops(in: watched.standardOutput)
        guard status == 0, stalls.count == Self.stalls, stopped.count == Self.stalls else {
            throw BenchError(
                "stallwatch run gap-target exited with \(status), \(stalls.count) stalls, \(stopped.count) spins timed:"
                    + " \(watched.standardError)")
        }
        let bareTarget = try ChildProcess(spins)
        guard try bareTarget.wait(timeout: 60) == 0 else { throw BenchError("the gap target failed bare") }
        let bare = GapRecorder.spinStops(in: bareTarget.standardOutput)

        let suppressed = stalls.map { $0.suppressed == true }
        // The first stall's captures are cold (images opened, first symbolication): left out of the full ones.
        let full = zip(stopped, suppressed).dropFirst().filter { !$0.1 }.map(\.0)
        let short = zip(stopped, suppressed).filter(\.1).map(\.0)
        let sampled = zip(stalls, suppressed).dropFirst().filter { !$0.1 }.map(\.0)
        var table = ResultTable(
            "Capture: --rate-limit \(Self.fullReports)/1h over \(Self.stalls) stalls of \(Int(Self.spinSeconds * 1000))"
                + " ms in one function (the gap target, threshold 50 ms, count 2): the spinning thread's time neither"
                + " on a CPU nor waiting for one, per stall",
            header: ["stall", "stalls", "samples", "stopped, median", "max", "median less bare", "sampler's clock"])
        func add(_ name: String, _ values: [Double], samples: String, sampler: String) {
            table.add([
                name, "\(values.count)", samples, Format.milliseconds(values.median),
                Format.milliseconds(values.max() ?? 0), Format.milliseconds(values.median - bare.median), sampler,
            ])
        }
        add(
            "full report (warm)", full,
            samples: "\(Int(sampled.map { Double($0.samples?.count ?? 0) }.median))",
            sampler: Format.milliseconds(
                sampled.map { ($0.samples ?? []).compactMap(\.stoppedMs).reduce(0, +) * 1e6 }.median))
        add("suppressed", short, samples: "1 taken, 0 kept", sampler: "-")
        add("bare (not watched)", bare, samples: "-", sampler: "-")
        var report = SectionReport(tables: [table])
        let excess = short.median - bare.median
        report.targets.append(
            TargetCheck(
                "--rate-limit: suppressed stall's stop beyond bare, median", measured: Format.milliseconds(excess),
                target: "≤ 0.200 ms",
                met: short.count == Self.stalls - Self.fullReports && excess <= Self.suppressedTarget,
                limit: "one warm sample's stop: PTRACE_INTERRUPT's stop and the wake-up after detach"))
        return report
    }
}
