// Item 1: what watching costs a busy run loop, as throughput ratios of runs alternated on one machine.
import Foundation

/// Runs each workload bare, under `stallwatch run`, with empty observers and with the classic detector,
/// round after round.
///
/// The machine is shared and noisy, so nothing is compared with a fixed number: each round runs the variants
/// back to back (the order reversed every other round, so none always goes first), and a ratio is the median
/// of the per-round ratios. Throughput is work per second of main-thread CPU time (see
/// `WorkloadResult.perCPUSecond`): what a watcher makes the main thread do counts, time the thread spent
/// preempted by the rest of the machine does not. Wall-clock ratios are printed beside it.
struct OverheadBenchmark {
    let products: BuildProducts
    let rounds: Int
    let seconds: Double

    enum Variant: String, CaseIterable {
        case bare, watched
        case emptyObservers = "empty observers"
        case classic
    }

    static let workloads: [BenchCommand.Workload] = [.tightLoop, .tightLoopFoundation, .realistic]
    static let targets: [BenchCommand.Workload: Double] = [
        .tightLoop: 0.97, .tightLoopFoundation: 0.97, .realistic: 0.995,
    ]

    func run() throws(BenchError) -> SectionReport {
        var results: [BenchCommand.Workload: [Variant: [WorkloadResult]]] = [:]
        for round in 1...rounds {
            let order = round.isMultiple(of: 2) ? Variant.allCases.reversed() : Variant.allCases
            for workload in Self.workloads {
                for variant in order {
                    BenchOutput.progress(
                        "overhead: round \(round)/\(rounds), \(workload.rawValue), \(variant.rawValue)")
                    results[workload, default: [:]][variant, default: []].append(try measure(workload, variant))
                }
            }
        }

        var report = SectionReport()
        var table = ResultTable(
            "Watching overhead: \(rounds) alternating rounds of \(Format.fixed(seconds, 1)) s runs; throughput per "
                + "second of main-thread CPU; ratio to bare = median of the per-round ratios [lowest–highest]; \"within "
                + "noise\": the target lies inside that bracket",
            header: [
                "workload", "bare", "watched/bare", "empty observers/bare", "classic/bare", "watched/bare, wall clock",
                "target", "result",
            ])
        for workload in Self.workloads {
            let runs = results[workload] ?? [:]
            let places = workload == .realistic ? 3 : 2
            func ratios(_ variant: Variant, _ throughput: (WorkloadResult) -> Double) -> [Double] {
                zip(runs[variant] ?? [], runs[.bare] ?? []).map { throughput($0) / throughput($1) }
            }
            func spread(_ values: [Double]) -> String {
                "\(Format.fixed(values.median, places)) [\(Format.fixed(values.min() ?? 0, places))–"
                    + "\(Format.fixed(values.max() ?? 0, places))]"
            }
            let watched = ratios(.watched, \.perCPUSecond)
            let classic = ratios(.classic, \.perCPUSecond)
            let target = Self.targets[workload] ?? 1
            let check = TargetCheck(
                "\(workload.rawValue) throughput, watched/bare", measured: spread(watched),
                target: "≥ \(Format.fixed(target, places))", met: watched.median >= target,
                withinNoise: (watched.min() ?? 0) < target && target <= (watched.max() ?? 0),
                limit: "CoreFoundation's observer dispatch on every observed transition (compare the empty "
                    + "observers), and run-to-run noise as wide as the bracket")
            table.add([
                workload.rawValue, Format.rate((runs[.bare] ?? []).map(\.perCPUSecond).median), spread(watched),
                spread(ratios(.emptyObservers, \.perCPUSecond)), spread(classic),
                spread(ratios(.watched, \.perSecond)), check.target, check.verdict,
            ])
            report.targets.append(check)
            report.lines.append("\(workload.rawValue) throughput ratio: \(Format.fixed(watched.median, places))")
            report.lines.append(
                "\(workload.rawValue) classic-detector throughput ratio: \(Format.fixed(classic.median, places))")
        }
        report.tables.append(table)
        return report
    }

    /// One run. A watched run writes its JSON reports to a scratch file, checked to make sure the agent really
    /// watched the workload: a run nobody watched would look free.
    private func measure(_ workload: BenchCommand.Workload, _ variant: Variant) throws(BenchError) -> WorkloadResult {
        var command = [products.bench, workload.rawValue, "--seconds", "\(seconds)"]
        let reports = NSTemporaryDirectory() + "stallwatch-bench-\(getpid()).ndjson"
        switch variant {
        case .bare: break
        case .watched:
            try? FileManager.default.removeItem(atPath: reports)
            command = [products.stallwatch, "run", "--format", "json", "--output", reports, "--"] + command
        case .emptyObservers: command.append("--empty-observers")
        case .classic: command.append("--classic")
        }
        let child = try ChildProcess(command)
        let status = try child.wait(timeout: seconds + 30)
        guard status == 0, let result = WorkloadResult(output: child.standardOutput) else {
            throw BenchError("\(command.joined(separator: " ")) exited with \(status): \(child.standardError)")
        }
        if variant == .watched {
            defer { try? FileManager.default.removeItem(atPath: reports) }
            let records = (try? String(contentsOfFile: reports, encoding: .utf8)).map(ReportRecord.parse) ?? []
            guard let summary = records.first(where: { $0.event == "summary" }), summary.watchedPids?.isEmpty == false
            else {
                throw BenchError("stallwatch did not watch \(workload.rawValue): \(child.standardError)")
            }
        }
        return result
    }
}
