// The driver: runs the benchmark sections in turn, prints each section's tables as it finishes, then every
// target check in one table.
import Foundation

struct Driver {
    let options: DriverOptions
    let products: BuildProducts

    func run() throws(BenchError) {
        BenchOutput.line(Self.machine + "\nproducts: \(products.directory)\n")
        var targets: [TargetCheck] = []
        for section in options.sections {
            let report =
                switch section {
                case .overhead:
                    try OverheadBenchmark(products: products, rounds: options.rounds, seconds: options.seconds).run()
                case .instructions: try InstructionBenchmark(products: products).run()
                case .loops:
                    try LoopThreadsBenchmark(products: products, rounds: options.rounds, seconds: options.seconds).run()
                case .kernel: try KernelSourceBenchmark(products: products, rounds: min(options.rounds, 3)).run()
                case .detection: try DetectionBenchmark(products: products).run()
                case .capture: try CaptureBenchmark(products: products).run()
                case .stack: try StackComparison(products: products).run()
                case .memory: try MemoryBenchmark(products: products).run()
                case .soak: try SoakBenchmark(products: products).run()
                case .report: try ReportBenchmark(products: products).run()
                case .metrics:
                    try MetricsBenchmark(products: products, rounds: options.rounds).run()
                }
            for table in report.tables { BenchOutput.line(table.rendered + "\n") }
            if !report.lines.isEmpty { BenchOutput.line(report.lines.joined(separator: "\n") + "\n") }
            targets += report.targets
        }
        var summary = ResultTable("Targets", header: ["measure", "measured", "target", "result"])
        for target in targets {
            summary.add([target.name, target.measured, target.target, target.verdict])
        }
        BenchOutput.line(summary.rendered)
        let missed = targets.filter { !$0.met }
        for target in missed {
            BenchOutput.line("missed: \(target.name) (\(target.measured), target \(target.target)): \(target.limit)")
        }
    }

    /// `machine: 2 CPUs, AMD EPYC, Linux 6.1.0`: what a reader needs to weigh the numbers.
    static var machine: String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        var system = utsname()
        uname(&system)
        let release = withUnsafeBytes(of: &system.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "machine: \(ProcessInfo.processInfo.activeProcessorCount) CPUs, \(model), Linux \(release)"
    }
}
