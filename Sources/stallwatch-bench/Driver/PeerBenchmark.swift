// What finding a descriptor's other end costs at capture (`blocker.searchMs` of a descriptor wait): the fd link, the
// socket tables, and the one pass over every process's /proc/PID/fd that finds the holders. The bound is 50 ms.
import Foundation

/// Runs Tests/Fixtures/Programs/descriptor_waits.c's pipe and TCP scenarios under `stallwatch run` and reads each
/// stall's search time, with how many processes the host had.
struct PeerBenchmark {
    let products: BuildProducts

    static let scenarios = ["pipe", "tcp"]
    static let runsPerScenario = 3
    static let targetMilliseconds = 50.0

    func run() throws(BenchError) -> SectionReport {
        let program = try BlockerBenchmark.buildFixture(named: "descriptor_waits", extraArguments: [])
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let processes =
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc").filter { Int($0) != nil }.count) ?? 0
        var table = ResultTable(
            "Who is at the other end: finding a descriptor's peer among all \(processes) processes at a stall's capture"
                + " (blocker.searchMs: the fd link, the socket tables, one pass over /proc/*/fd), release build",
            header: ["workload", "stalls", "peer named", "search median", "search max"])
        var all: [Double] = []
        for scenario in Self.scenarios {
            var records: [ReportRecord] = []
            for round in 1...Self.runsPerScenario {
                BenchOutput.progress("detection: descriptor_waits \(scenario) \(round)/\(Self.runsPerScenario)")
                let child = try ChildProcess([products.stallwatch, "run", "--format", "json", "--", program, scenario])
                guard try child.wait(timeout: 60) == 0 else {
                    throw BenchError("stallwatch run -- descriptor_waits \(scenario): \(child.standardError)")
                }
                records += ReportRecord.parse(child.standardOutput)
            }
            let stalls = records.filter { $0.event == "stall" }
            let times = stalls.compactMap { $0.blocker?.searchMs }
            all += times
            let named = stalls.filter { $0.blocker?.peers?.isEmpty == false }
            table.add([
                "descriptor_waits.c \(scenario)", "\(stalls.count)", "\(named.count)/\(stalls.count)",
                times.isEmpty ? "–" : Format.fixed(times.median, 3) + " ms",
                times.isEmpty ? "–" : Format.fixed(times.max() ?? 0, 3) + " ms",
            ])
        }
        var report = SectionReport(tables: [table])
        report.targets.append(
            TargetCheck(
                "finding a descriptor's peer, max over \(processes) processes",
                measured: Format.fixed(all.max() ?? 0, 3) + " ms",
                target: "≤ \(Format.fixed(Self.targetMilliseconds, 0)) ms",
                met: !all.isEmpty && (all.max() ?? .infinity) <= Self.targetMilliseconds,
                limit: "a readlink per descriptor of every process"))
        return report
    }
}
