// #29: what `--metrics` costs the watched loop when Prometheus scrapes it every 500 ms.
import Foundation
import StallwatchMetrics

/// Runs the tight loop under `stallwatch run --metrics 127.0.0.1:0` once, in phases of ``phaseSeconds``: in every
/// other phase the driver scrapes the endpoint every 500 ms (as a Prometheus server would), in the others it leaves it
/// alone. The loop prints its throughput per window (``WindowedLoop``), and each window wholly inside a phase counts
/// for that phase.
///
/// One run, so both sides share the run's agent, its stallwatch and the machine's state of the moment; a round is one
/// scraped and one quiet phase, back to back, the order reversed every other round, and the ratio is the median of the
/// rounds' ratios, per second of the loop's CPU and per second of wall clock (on 2 cores a scrape's CPU is CPU the
/// loop might have had).
struct MetricsBenchmark {
    let products: BuildProducts
    let rounds: Int

    static let scrapeInterval = 0.5
    static let phaseSeconds = 1.0
    static let windowSeconds = 0.25
    /// Before the first phase: the workload and its agent settle.
    static let settleSeconds = 0.5

    /// One phase: when it ran, whether it was scraped, and what the loop got done in its windows.
    struct Phase {
        let start: UInt64
        let end: UInt64
        let scraped: Bool
        var count: UInt64 = 0
        var cpuNanoseconds: UInt64 = 0
        var wallNanoseconds: UInt64 = 0

        var perCPUSecond: Double { Double(count) / (Double(max(cpuNanoseconds, 1)) / 1e9) }
        var perSecond: Double { Double(count) / (Double(max(wallNanoseconds, 1)) / 1e9) }
    }

    func run() throws(BenchError) -> SectionReport {
        let phaseCount = 2 * rounds
        let seconds = Self.settleSeconds + Double(phaseCount) * Self.phaseSeconds + 1
        let command = [
            products.stallwatch, "run", "--metrics", "127.0.0.1:0", "--format", "json", "--output", "/dev/null", "--",
            products.bench, BenchCommand.Workload.tightLoop.rawValue, "--seconds", "\(seconds)", "--windows",
            "\(Self.windowSeconds)",
        ]
        BenchOutput.progress("metrics: one \(Format.fixed(seconds, 1)) s run, \(phaseCount) phases")
        let child = try ChildProcess(command)
        let line = try child.waitForLine(fromStandardError: true, timeout: 20) { $0.contains("serving metrics on") }
        guard let port = line.split(separator: ":").last.flatMap({ UInt16($0.prefix { $0.isNumber }) }) else {
            throw BenchError("no port in '\(line)'")
        }
        // The loop's first window once it runs under watch; then the phases.
        _ = try child.waitForLine(fromStandardError: false, timeout: 20) { $0.hasPrefix("stallwatch-bench: window") }
        let origin = MonotonicClock.now() + UInt64(Self.settleSeconds * 1e9)
        var phases: [Phase] = []
        var roundTrips: [Double] = []
        for index in 0..<phaseCount {
            let round = index / 2
            let scraped = (index % 2 == 0) == round.isMultiple(of: 2)
            let start = origin + UInt64(Double(index) * Self.phaseSeconds * 1e9)
            let end = start + UInt64(Self.phaseSeconds * 1e9)
            phases.append(Phase(start: start, end: end, scraped: scraped))
            guard scraped else { continue }
            var next = start
            while next < end {
                MonotonicClock.sleep(until: next)
                let began = MonotonicClock.now()
                guard let answer = MetricsScrape.get(port: port), answer.hasPrefix("HTTP/1.1 200 OK") else {
                    throw BenchError("a scrape of port \(port) was not answered")
                }
                roundTrips.append(Double(MonotonicClock.now() - began) / 1e9)
                next += UInt64(Self.scrapeInterval * 1e9)
            }
        }
        let status = try child.wait(timeout: seconds + 30)
        guard status == 0 else {
            throw BenchError("\(command.joined(separator: " ")) exited with \(status): \(child.standardError)")
        }
        for window in WindowedLoop.Window.parse(child.standardOutput) {
            guard let index = phases.firstIndex(where: { $0.start <= window.start && window.end <= $0.end }) else {
                continue
            }
            phases[index].count += window.count
            phases[index].cpuNanoseconds += window.cpuNanoseconds
            phases[index].wallNanoseconds += window.end - window.start
        }
        // Each round's (scraped, quiet) phases.
        var pairs: [(scraped: Phase, quiet: Phase)] = []
        for index in stride(from: 0, to: phases.count - 1, by: 2) {
            let (first, second) = (phases[index], phases[index + 1])
            pairs.append(first.scraped ? (first, second) : (second, first))
        }
        guard pairs.allSatisfy({ $0.scraped.count > 0 && $0.quiet.count > 0 }) else {
            throw BenchError("a phase had no whole window: \(child.standardError)")
        }
        let perCPU = pairs.map { $0.scraped.perCPUSecond / $0.quiet.perCPUSecond }
        let wall = pairs.map { $0.scraped.perSecond / $0.quiet.perSecond }
        func spread(_ values: [Double]) -> String {
            "\(Format.fixed(values.median, 3)) [\(Format.fixed(values.min() ?? 0, 3))–\(Format.fixed(values.max() ?? 0, 3))]"
        }
        var table = ResultTable(
            "Metrics scraped every \(Format.fixed(Self.scrapeInterval, 1)) s: one tight-loop run under `run --metrics`"
                + " in \(phaseCount) phases of \(Format.fixed(Self.phaseSeconds, 1)) s, scraped and not in turn;"
                + " scraped/not scraped = median of the \(rounds) rounds' ratios [lowest–highest]",
            header: [
                "workload", "not scraped", "scraped/not scraped", "scraped/not scraped, wall clock", "scrapes",
                "scrape round trip, median [max]", "target", "result",
            ])
        // No measurable cost: the median ratio within 2 % of 1, the tight loop's own run-to-run noise being wider.
        let target = 0.98
        let check = TargetCheck(
            "tight-loop throughput, scraped/not scraped", measured: spread(perCPU),
            target: "≥ \(Format.fixed(target, 2))", met: perCPU.median >= target,
            withinNoise: (perCPU.min() ?? 0) < target && target <= (perCPU.max() ?? 0),
            limit: "a scrape renders on stallwatch's endpoint thread, in stallwatch's process, not the workload's;"
                + " on a shared machine, the noise of the moment")
        table.add([
            BenchCommand.Workload.tightLoop.rawValue,
            Format.rate(pairs.map { $0.quiet.perCPUSecond }.median), spread(perCPU), spread(wall),
            "\(roundTrips.count)",
            "\(Format.fixed(roundTrips.median * 1000, 2)) ms [\(Format.fixed((roundTrips.max() ?? 0) * 1000, 2)) ms]",
            check.target, check.verdict,
        ])
        var report = SectionReport()
        report.tables.append(table)
        report.targets.append(check)
        report.lines.append("tight-loop throughput ratio, scraped/not scraped: \(Format.fixed(perCPU.median, 3))")
        return report
    }
}
