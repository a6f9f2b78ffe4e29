// Item 5: whether the CLI's and the agent's memory stay flat over a long run with many stalls.
import Foundation

/// Runs the demo under stallwatch with a stall every 250 ms, and the same demo bare beside it, reading each
/// process's resident set from `/proc/PID/status` twice a second, and the anonymous part of it (what a process
/// allocates, without the pages of its files the kernel maps in as code runs).
///
/// A 30 ms threshold makes the 150 ms stalls long enough to detect (3 × 30 ms), so every one of them goes
/// through the whole path: detection, capture, image map, symbolication and a JSON report. The first half of
/// the stalls is warm-up (libraries loading, symbol caches filling as samples land in new images); memory
/// is flat if it does not grow over the second half.
struct MemoryBenchmark {
    let products: BuildProducts

    static let stalls = 80
    static let period = 0.25
    static let demoArguments = ["--stalls", "\(stalls)", "--duration", "150ms", "--period", "250ms"]
    /// The demo's quiet lead-in before its first stall.
    static let leadIn = 0.3
    static let interval = 0.5
    /// Growth over the second half that still counts as flat: a few pages of allocator slack, not a per-stall cost.
    static let flatLimitKiB = 1024

    static var stallsEnd: Double { leadIn + Double(stalls) * period }
    static var warmUp: Double { leadIn + Double(stalls / 2) * period }

    func run() throws(BenchError) -> SectionReport {
        BenchOutput.progress("memory: \(Self.stalls) stalls, watched and bare side by side")
        let watched = try ChildProcess(
            [products.stallwatch, "demo", "--threshold", "30ms", "--format", "json", "--"] + Self.demoArguments)
        let bare = try ChildProcess([products.demo] + Self.demoArguments)
        let banner = try watched.waitForLine(fromStandardError: true, timeout: 10) {
            $0.hasPrefix("stallwatch-demo: scenario=")
        }
        guard let workload = banner.split(separator: " ").last.flatMap({ Int32($0.dropFirst("pid=".count)) }) else {
            throw BenchError("no pid in the demo's banner: \(banner)")
        }

        // Elapsed time counts from the banner, which the demo prints as its timetable starts.
        let processes = [("stallwatch CLI", watched.pid), ("demo with the agent", workload), ("demo bare", bare.pid)]
        var series = processes.map { _ in [(at: Double, kibibytes: Int, anonymous: Int)]() }
        let start = MonotonicClock.now()
        while true {
            let elapsed = Double(MonotonicClock.now() - start) / 1e9
            let readings = processes.map { Self.residentKiB(of: $0.1) }
            if readings.allSatisfy({ $0 == nil }) { break }
            for (index, reading) in readings.enumerated() {
                if let reading { series[index].append((elapsed, reading.resident, reading.anonymous)) }
            }
            MonotonicClock.sleep(seconds: Self.interval)
        }
        _ = try watched.wait(timeout: 30)
        _ = try bare.wait(timeout: 30)
        let reported = ReportRecord.parse(watched.standardOutput).filter { $0.event == "stall" }.count

        var table = ResultTable(
            "Memory: VmRSS every \(Self.interval) s over \(Self.stalls) stalls of 150 ms every 250 ms "
                + "(--threshold 30ms, \(reported) stalls reported); first and last: the second half of the stalls, "
                + "\(Format.fixed(Self.warmUp, 1)) s to \(Format.fixed(Self.stallsEnd, 1)) s; max: the whole run",
            header: [
                "process", "first", "last", "last − first", "per stall", "max", "of which anonymous: last − first",
            ])
        var report = SectionReport()
        var lastValues: [Int] = []
        for ((name, _), samples) in zip(processes, series) {
            let settledSamples = samples.filter { (Self.warmUp...Self.stallsEnd).contains($0.at) }
            let settled = settledSamples.map(\.kibibytes)
            let first = settled.first ?? 0
            let last = settled.last ?? 0
            let anonymousGrowth = (settledSamples.last?.anonymous ?? 0) - (settledSamples.first?.anonymous ?? 0)
            lastValues.append(last)
            table.add([
                name, Format.mebibytes(first), Format.mebibytes(last), Format.mebibytes(last - first),
                Format.fixed(Double(last - first) / Double(Self.stalls - Self.stalls / 2), 1) + " KiB",
                Format.mebibytes(samples.map(\.kibibytes).max() ?? 0), Format.mebibytes(anonymousGrowth),
            ])
            if name != "demo bare" {
                report.targets.append(
                    TargetCheck(
                        "\(name) RSS growth over the second half", measured: Format.mebibytes(last - first),
                        target: "< \(Format.mebibytes(Self.flatLimitKiB))",
                        met: last - first < Self.flatLimitKiB && settled.count >= 2, limit: "memory kept per stall"))
            }
        }
        report.tables.append(table)
        report.lines.append(
            "the agent's resident cost (demo with the agent − demo bare, last samples): "
                + Format.mebibytes(lastValues[1] - lastValues[2]))
        report.targets.append(
            TargetCheck(
                "stalls reported in the memory run", measured: "\(reported)/\(Self.stalls)", target: "all",
                met: reported == Self.stalls, limit: "stalls missed under load"))
        return report
    }

    /// `VmRSS` from `/proc/PID/status`, and its anonymous part (`RssAnon`: heap and stacks, not mapped files), in
    /// KiB; nil once the process is gone (or a zombie).
    static func residentKiB(of pid: Int32) -> (resident: Int, anonymous: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let lines = status.split(separator: "\n")
        func field(_ name: String) -> Int? {
            lines.first { $0.hasPrefix(name + ":") }
                .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } }
        }
        guard let resident = field("VmRSS") else { return nil }
        return (resident, field("RssAnon") ?? 0)
    }
}
