// The tight loop in consecutive windows, each one's throughput printed with its CLOCK_MONOTONIC span, so that a
// driver can compare the parts of one run it treated differently (scraped or not).
import Foundation

enum WindowedLoop {
    /// Runs ``TightLoop`` for `seconds` in windows of `window` seconds, printing one line per window:
    /// `stallwatch-bench: window start_ns=N end_ns=N count=N cpu_ns=N`. Returns the whole run's result.
    static func run(seconds: Double, window: Double) -> WorkloadResult {
        var count: UInt64 = 0
        var elapsed: UInt64 = 0
        var cpu: UInt64 = 0
        let end = MonotonicClock.now() + UInt64(seconds * 1e9)
        while MonotonicClock.now() < end {
            let start = MonotonicClock.now()
            let part = TightLoop.run(seconds: window, driver: .coreFoundation)
            BenchOutput.line(
                "stallwatch-bench: window start_ns=\(start) end_ns=\(MonotonicClock.now()) count=\(part.count)"
                    + " cpu_ns=\(part.cpuNanoseconds)")
            count += part.count
            elapsed += part.elapsedNanoseconds
            cpu += part.cpuNanoseconds
        }
        return WorkloadResult(count: count, elapsedNanoseconds: max(elapsed, 1), cpuNanoseconds: max(cpu, 1))
    }

    /// One printed window.
    struct Window {
        let start: UInt64
        let end: UInt64
        let count: UInt64
        let cpuNanoseconds: UInt64

        /// The windows in a workload's output.
        static func parse(_ output: String) -> [Window] {
            output.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("stallwatch-bench: window ") else { return nil }
                var fields: [Substring: UInt64] = [:]
                for field in line.split(separator: " ").dropFirst(2) {
                    let parts = field.split(separator: "=", maxSplits: 1)
                    if parts.count == 2, let value = UInt64(parts[1]) { fields[parts[0]] = value }
                }
                guard let start = fields["start_ns"], let end = fields["end_ns"], let count = fields["count"],
                    let cpu = fields["cpu_ns"], cpu > 0
                else { return nil }
                return Window(start: start, end: end, count: count, cpuNanoseconds: cpu)
            }
        }
    }
}
