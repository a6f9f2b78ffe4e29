// The text exposition as a pure function of the metrics: the families, the bound on thread names, escaping, units.
import Foundation
import StallwatchCore
import Testing

@testable import StallwatchMetrics

@Suite struct PrometheusExpositionTests {
    private let second: UInt64 = 1_000_000_000

    /// The sample lines of `text` (no comments), as name-with-labels → value.
    private func samples(_ text: String) -> [String: String] {
        var samples: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return samples
    }

    @Test func everyFamilyHasHelpAndType() {
        let text = PrometheusExposition.render(StallMetrics(), now: 0)
        for (name, type) in [
            ("stallwatch_stalls_total", "counter"), ("stallwatch_stalled_seconds", "gauge"),
            ("stallwatch_stall_duration_seconds", "histogram"), ("stallwatch_loop_busy_seconds", "histogram"),
            ("stallwatch_watched_threads", "gauge"), ("stallwatch_capture_seconds", "histogram"),
        ] {
            #expect(text.contains("\n# TYPE \(name) \(type)\n") || text.hasPrefix("# HELP \(name) "), "\(name)")
            #expect(text.contains("# HELP \(name) "), "\(name)")
        }
        #expect(text.hasSuffix("\n"))
    }

    @Test func stallsCountAtDetectionAndOnce() {
        var metrics = StallMetrics()
        metrics.showThread("main")
        let first = StallMetrics.StallKey(pid: 10, identifier: 1)
        metrics.stallDetected(first, thread: "main", start: 5 * second)
        #expect(
            samples(PrometheusExposition.render(metrics, now: 6 * second))["stallwatch_stalls_total{thread=\"main\"}"]
                == "1")
        // Still going on: its age, in seconds.
        let during = samples(PrometheusExposition.render(metrics, now: 6 * second + 500_000_000))
        #expect(during["stallwatch_stalled_seconds{thread=\"main\"}"] == "1.5")
        metrics.stallFinished(first, thread: "main", duration: 2 * second, captureNanoseconds: 300_000)
        // Outside the loop: never detected, counted when it ends.
        metrics.stallFinished(
            StallMetrics.StallKey(pid: 10, identifier: 2), thread: "main", duration: 400_000_000,
            captureNanoseconds: nil)
        // Unfinished when the watch ended: counted at detection, no length.
        let third = StallMetrics.StallKey(pid: 11, identifier: 1)
        metrics.stallDetected(third, thread: "worker", start: 9 * second)
        metrics.stallFinished(third, thread: "worker", duration: nil, captureNanoseconds: 2_000_000)
        let after = samples(PrometheusExposition.render(metrics, now: 20 * second))
        #expect(after["stallwatch_stalls_total{thread=\"main\"}"] == "2")
        #expect(after["stallwatch_stalls_total{thread=\"worker\"}"] == "1")
        #expect(after["stallwatch_stalled_seconds{thread=\"main\"}"] == "0")
        #expect(after["stallwatch_stalled_seconds{thread=\"worker\"}"] == "0")
        #expect(after["stallwatch_stall_duration_seconds_count"] == "2")
        #expect(after["stallwatch_stall_duration_seconds_sum"] == "2.4")
        #expect(after["stallwatch_stall_duration_seconds_bucket{le=\"0.25\"}"] == "0")
        #expect(after["stallwatch_stall_duration_seconds_bucket{le=\"0.5\"}"] == "1")
        #expect(after["stallwatch_stall_duration_seconds_bucket{le=\"2.5\"}"] == "2")
        #expect(after["stallwatch_stall_duration_seconds_bucket{le=\"+Inf\"}"] == "2")
        #expect(after["stallwatch_capture_seconds_count"] == "2")
        #expect(after["stallwatch_capture_seconds_sum"] == "0.0023")
        #expect(after["stallwatch_capture_seconds_bucket{le=\"0.00025\"}"] == "0")
        #expect(after["stallwatch_capture_seconds_bucket{le=\"0.0005\"}"] == "1")
    }

    @Test func anExactBoundCountsUnderIt() {
        var histogram = BucketHistogram(bounds: StallMetrics.stallDurationBounds)
        histogram.observe(nanoseconds: second)
        histogram.observe(nanoseconds: second + 1)
        histogram.observe(nanoseconds: 400 * second)
        let bounds = histogram.bounds.map { PrometheusExposition.seconds($0) }
        let cumulative = Dictionary(uniqueKeysWithValues: zip(bounds + ["+Inf"], histogram.cumulativeCounts))
        #expect(cumulative["1"] == 1)
        #expect(cumulative["2.5"] == 2)
        #expect(cumulative["300"] == 2)
        #expect(cumulative["+Inf"] == 3)
    }

    @Test func atMost64ThreadNamesThenOther() {
        var metrics = StallMetrics()
        for index in 0..<100 {
            metrics.stallDetected(
                StallMetrics.StallKey(pid: 1, identifier: index), thread: "worker-\(index)", start: 0)
        }
        // A name that already has its series keeps it after the limit is reached.
        metrics.stallDetected(StallMetrics.StallKey(pid: 1, identifier: 100), thread: "worker-3", start: 0)
        let counted = samples(PrometheusExposition.render(metrics, now: second)).filter {
            $0.key.hasPrefix("stallwatch_stalls_total{")
        }
        #expect(counted.count == 65)
        #expect(counted["stallwatch_stalls_total{thread=\"other\"}"] == "36")
        #expect(counted["stallwatch_stalls_total{thread=\"worker-3\"}"] == "2")
        #expect(counted["stallwatch_stalls_total{thread=\"worker-63\"}"] == "1")
        #expect(counted["stallwatch_stalls_total{thread=\"worker-64\"}"] == nil)
        #expect(counted.values.compactMap { Int($0) }.reduce(0, +) == 101)
        let stalled = samples(PrometheusExposition.render(metrics, now: 3 * second)).filter {
            $0.key.hasPrefix("stallwatch_stalled_seconds{")
        }
        #expect(stalled.count == 65)
        #expect(stalled["stallwatch_stalled_seconds{thread=\"other\"}"] == "3")
    }

    @Test func labelValuesAreEscaped() {
        #expect(PrometheusExposition.escapedLabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd")
        #expect(PrometheusExposition.escapedLabelValue("NIO-ELT-0-#1 ü") == "NIO-ELT-0-#1 ü")
        var metrics = StallMetrics()
        metrics.stallDetected(StallMetrics.StallKey(pid: 1, identifier: 1), thread: "we\"ird\\\nname", start: 0)
        let text = PrometheusExposition.render(metrics, now: second)
        #expect(text.contains("stallwatch_stalls_total{thread=\"we\\\"ird\\\\\\nname\"} 1\n"))
        #expect(!text.contains("ird\\\nname"), "no raw line feed inside a label value")
    }

    @Test func busyPeriodsUnderPrometheusBounds() {
        var histogram = LatencyHistogram()
        for _ in 0..<5 { histogram.record(nanoseconds: 500_000) }  // 0.5 ms
        for _ in 0..<3 { histogram.record(nanoseconds: 3_000_000) }  // 3 ms
        histogram.record(nanoseconds: 20 * second)
        var metrics = StallMetrics()
        metrics.busyPeriods(histogram, of: 1)
        var other = LatencyHistogram()
        other.record(nanoseconds: 40_000_000)  // 40 ms, another process
        metrics.busyPeriods(other, of: 2)
        let lines = samples(PrometheusExposition.render(metrics, now: 0))
        #expect(lines["stallwatch_loop_busy_seconds_bucket{le=\"0.001\"}"] == "5")
        #expect(lines["stallwatch_loop_busy_seconds_bucket{le=\"0.0025\"}"] == "5")
        #expect(lines["stallwatch_loop_busy_seconds_bucket{le=\"0.005\"}"] == "8")
        #expect(lines["stallwatch_loop_busy_seconds_bucket{le=\"0.05\"}"] == "9")
        #expect(lines["stallwatch_loop_busy_seconds_bucket{le=\"10\"}"] == "9")
        #expect(lines["stallwatch_loop_busy_seconds_bucket{le=\"+Inf\"}"] == "10")
        #expect(lines["stallwatch_loop_busy_seconds_count"] == "10")
        let sum = Double(lines["stallwatch_loop_busy_seconds_sum"] ?? "") ?? 0
        let truth = 5 * 0.0005 + 3 * 0.003 + 20 + 0.04
        #expect(abs(sum - truth) <= truth * LatencyHistogram.precisionPercent / 100, "\(sum)")
        // A newer histogram of a process replaces its older one (the agent sends cumulative counts).
        metrics.busyPeriods(LatencyHistogram(), of: 2)
        #expect(samples(PrometheusExposition.render(metrics, now: 0))["stallwatch_loop_busy_seconds_count"] == "9")
    }

    @Test func watchedThreadsAndSeconds() {
        var metrics = StallMetrics()
        metrics.watchedThreads = 3
        #expect(samples(PrometheusExposition.render(metrics, now: 0))["stallwatch_watched_threads"] == "3")
        #expect(PrometheusExposition.seconds(0) == "0")
        #expect(PrometheusExposition.seconds(2_500_000) == "0.0025")
        #expect(PrometheusExposition.seconds(12_000_000_001) == "12.000000001")
        #expect(PrometheusExposition.number(2) == "2")
        #expect(PrometheusExposition.number(0.25) == "0.25")
    }

    /// The format's own checker, on an exposition with every family filled in and a hostile thread name.
    @Test func promtoolAcceptsTheExposition() throws {
        let promtool = "/usr/bin/promtool"
        try #require(FileManager.default.isExecutableFile(atPath: promtool), "Scripts/install-test-tools installs it")
        var metrics = StallMetrics()
        metrics.showThread("main")
        metrics.stallDetected(StallMetrics.StallKey(pid: 1, identifier: 1), thread: "q\"uo\\te\nnl", start: 0)
        metrics.stallFinished(
            StallMetrics.StallKey(pid: 1, identifier: 2), thread: "main", duration: second, captureNanoseconds: 1000)
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: 1_234_567)
        metrics.busyPeriods(histogram, of: 1)
        metrics.watchedThreads = 2
        let process = Process()
        process.executableURL = URL(fileURLWithPath: promtool)
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(PrometheusExposition.render(metrics, now: second).utf8))
        try input.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "promtool: \(said)")
    }
}
