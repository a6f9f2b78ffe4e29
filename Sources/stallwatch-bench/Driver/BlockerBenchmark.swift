// What finding a stalled thread's blocker costs at capture (the stall record's `blocker.searchMs`): the futex word or
// mutex read, the holder's state, capture and names, the chain; or a child's /proc files. The budget is 5 ms
// per stall.
import Foundation

/// Runs Tests/Fixtures/Programs/blockers.c's scenarios under `stallwatch run` and reads each stall's search time,
/// beside the demo's mutex scenario (a Swift `NSLock`, from the detection runs).
struct BlockerBenchmark {
    let products: BuildProducts

    static let scenarios = ["mutex", "pi", "abba", "child", "children"]
    static let runsPerScenario = 3
    static let targetMilliseconds = 5.0

    /// One row per scenario and the target check over all of them; `demoMutex` are the detection runs' mutex stalls.
    func run(demoMutex: [ReportRecord]) throws(BenchError) -> SectionReport {
        let program = try Self.buildFixture(named: "blockers", extraArguments: ["-pthread"])
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        var table = ResultTable(
            "Who blocked it: finding a stall's blocker at its capture (blocker.searchMs: the lock's owner read from"
                + " memory, the holder's state, capture and names, the chain; a child's /proc files), release build",
            header: ["workload", "stalls", "blocker named", "search median", "search max"])
        var all: [Double] = []
        func add(_ name: String, _ records: [ReportRecord]) {
            let stalls = records.filter { $0.event == "stall" }
            let times = stalls.compactMap { $0.blocker?.searchMs }
            all += times
            let named = stalls.filter { $0.blocker?.holder?.tid != nil || $0.blocker?.children?.isEmpty == false }
            table.add([
                name, "\(stalls.count)", "\(named.count)/\(stalls.count)",
                times.isEmpty ? "–" : Format.fixed(times.median, 3) + " ms",
                times.isEmpty ? "–" : Format.fixed(times.max() ?? 0, 3) + " ms",
            ])
        }
        add("demo mutex (NSLock, holder asleep)", demoMutex)
        for scenario in Self.scenarios {
            var records: [ReportRecord] = []
            for round in 1...Self.runsPerScenario {
                BenchOutput.progress("detection: blockers \(scenario) \(round)/\(Self.runsPerScenario)")
                let child = try ChildProcess([products.stallwatch, "run", "--format", "json", "--", program, scenario])
                guard try child.wait(timeout: 60) == 0 else {
                    throw BenchError("stallwatch run -- blockers \(scenario): \(child.standardError)")
                }
                records += ReportRecord.parse(child.standardOutput)
            }
            add("blockers.c \(scenario)", records)
        }
        var report = SectionReport(tables: [table])
        // The median is the cost per stall; the max, said beside it, is what a loaded machine's scheduler adds to
        // one capture (as it does to the samples' stops).
        let typical = all.median
        report.targets.append(
            TargetCheck(
                "finding a stall's blocker, median (max)",
                measured: Format.fixed(typical, 3) + " ms (" + Format.fixed(all.max() ?? 0, 3) + " ms)",
                target: "≤ \(Format.fixed(Self.targetMilliseconds, 0)) ms",
                met: !all.isEmpty && typical <= Self.targetMilliseconds,
                limit: "each holder's capture and a first symbolication of its images"))
        return report
    }

    /// Tests/Fixtures/Programs/NAME.c, built with the system's cc into a temporary file named NAME: its children's
    /// command lines say so.
    static func buildFixture(named name: String, extraArguments: [String]) throws(BenchError) -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "Tests/Fixtures/Programs/\(name).c"
            ).path
        let directory = NSTemporaryDirectory() + "stallwatch-bench-\(name)-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let program = directory + "/" + name
        let compiler = try ChildProcess(["/usr/bin/cc", "-O1", "-g"] + extraArguments + [source, "-o", program])
        guard try compiler.wait(timeout: 60) == 0 else { throw BenchError("cc: \(compiler.standardError)") }
        return program
    }
}
