// `--metrics`: a run's endpoint scraped by the test itself and checked by promtool, then by a real Prometheus server;
// bad addresses and ports in use stop stallwatch before the workload starts.
import Foundation
import StallwatchTestSupport
import Testing

/// The value of every sample line of an exposition, by name with labels.
func exposedSamples(_ text: String) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
            continue
        }
        samples[String(line[..<space])] = value
    }
    return samples
}

/// The body of an HTTP answer.
func httpBody(_ answer: String) -> String {
    guard let end = answer.range(of: "\r\n\r\n") else { return "" }
    return String(answer[end.upperBound...])
}

/// `stallwatch run --metrics ADDRESS --format json -- sh -c 'stallwatch-demo …; sleep TAIL'`: stalls, then an idle
/// tail, so that a scrape comes after the last stall was detected.
func metricsRun(address: String, stalls: Int, tail: String = "1") throws -> RunningStallwatch {
    let demo = "\"$0\" --stalls \(stalls) --duration 500ms --period 900ms; sleep \(tail)"
    return try RunningStallwatch([
        "run", "--metrics", address, "--format", "json", "--", "/bin/sh", "-c", demo, Products.demo,
    ])
}

/// The port stallwatch said it serves on (`--metrics …:0`), once it has.
func servedPort(_ run: RunningStallwatch) -> UInt16? {
    var port: UInt16?
    _ = waitFor(
        {
            guard
                let range = run.stderrSoFar.range(
                    of: #"serving metrics on http://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression)
            else { return false }
            port = UInt16(run.stderrSoFar[range].dropFirst("serving metrics on http://127.0.0.1:".count).dropLast())
            return true
        }, timeout: 15)
    return port
}

@Suite(.serialized) struct MetricsTests {
    @Test func theRunsOwnScrapesPassPromtoolAndCountEveryStall() throws {
        let run = try metricsRun(address: "127.0.0.1:0", stalls: 3)
        let port = try #require(servedPort(run), "stallwatch never said where it serves")
        var scrapes: [String] = []
        while run.process.isRunning {
            if let answer = FreePort.get(port: port), answer.hasPrefix("HTTP/1.1 200 OK") { scrapes.append(answer) }
            usleep(100_000)
        }
        let result = try #require(run.result(timeout: 30))
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try #require(try result.summary)
        #expect(summary.stalls == 3, "\(result.stderr)")
        let last = try #require(scrapes.last.map(httpBody), "no scrape answered")
        let samples = exposedSamples(last)
        #expect(samples["stallwatch_stalls_total{thread=\"main\"}"] == Double(summary.stalls), "\(last)")
        #expect(samples["stallwatch_stall_duration_seconds_count"] == Double(try result.stalls.count))
        #expect(samples["stallwatch_stalled_seconds{thread=\"main\"}"] == 0)
        #expect((samples["stallwatch_loop_busy_seconds_count"] ?? 0) >= 3, "every stall is a busy period")
        #expect((samples["stallwatch_capture_seconds_count"] ?? 0) == 3)
        // Some scrape came during a stall: the gauge said how long it had lasted then.
        let stalledAtSomePoint = scrapes.compactMap {
            exposedSamples(httpBody($0))["stallwatch_stalled_seconds{thread=\"main\"}"]
        }
        // Detected at 240 ms, over at 500 ms; under a sanitizer the scrapes may come late.
        if Sanitizer.timingIsMeasurable {
            #expect(stalledAtSomePoint.contains { $0 >= 0.2 && $0 < 1 }, "\(stalledAtSomePoint)")
        }
        #expect(scrapes.contains { exposedSamples(httpBody($0))["stallwatch_watched_threads"] == 1 })
        // Counted at detection: a scrape during a stall already counts it, though it has not ended.
        let during = scrapes.map { exposedSamples(httpBody($0)) }.filter {
            ($0["stallwatch_stalled_seconds{thread=\"main\"}"] ?? 0) > 0
        }
        #expect(!during.isEmpty || !Sanitizer.timingIsMeasurable)
        for scrape in during {
            let counted = scrape["stallwatch_stalls_total{thread=\"main\"}"] ?? 0
            let ended = scrape["stallwatch_stall_duration_seconds_count"] ?? 0
            #expect(counted == ended + 1, "during a stall: \(counted) counted, \(ended) ended")
        }
        let counts = scrapes.compactMap { exposedSamples(httpBody($0))["stallwatch_stalls_total{thread=\"main\"}"] }
        #expect(counts == counts.sorted(), "a counter never goes down")
        try expectPromtoolAccepts(last)
        // Gone with the run: nothing listens there any more.
        #expect(FreePort.get(port: port) == nil)
    }

    /// `attach` from outside serves the same: its counter ends equal to the stalls its summary counts.
    @Test func attachServesItsMetricsToo() throws {
        let demo = try RunningDemo([
            "--scenario", "sleep", "--stalls", "3", "--duration", "500ms", "--period", "1200ms",
        ])
        let watch = try RunningStallwatch([
            "attach", "--mode", "external", "--metrics", "127.0.0.1:0", "--format", "json", String(demo.pid),
        ])
        let port = try #require(servedPort(watch), "stallwatch never said where it serves")
        var last: String?
        while watch.process.isRunning {
            if let answer = FreePort.get(port: port), answer.hasPrefix("HTTP/1.1 200 OK") { last = httpBody(answer) }
            usleep(100_000)
        }
        demo.waitForExit()
        let result = try #require(watch.result(timeout: 30))
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try #require(try result.summary)
        #expect(summary.stalls >= 2, "the demo's stalls after the attach: \(result.stderr)")
        let samples = exposedSamples(try #require(last, "no scrape answered"))
        #expect(samples["stallwatch_stalls_total{thread=\"main\"}"] == Double(summary.stalls))
        #expect(samples["stallwatch_watched_threads"] == 1, "the demo's main thread, from /proc")
        try expectPromtoolAccepts(try #require(last))
    }

    @Test func badAddressesAndPortsInUseStopBeforeTheWorkloadStarts() throws {
        for bad in ["9464", "localhost", ":99999", "example.com:9464", "[::1:9464", ""] {
            let result = try runStallwatch(["run", "--metrics", bad, "--", "/bin/sh", "-c", "echo ran"])
            #expect(result.status == 64, "--metrics '\(bad)'")
            #expect(result.stderr.hasPrefix("Error: The value '\(bad)' is invalid for '--metrics <address>': "))
            #expect(!result.stdout.contains("ran"), "the workload must not start")
        }
        let (port, occupied) = try FreePort.occupied()
        defer { close(occupied) }
        let sleeper = try RunningProgram("/bin/sleep", ["30"])
        for command in [["run"], ["attach", "--duration", "1s"]] {
            let tail = command == ["run"] ? ["--", "/bin/sh", "-c", "echo ran"] : ["\(sleeper.pid)"]
            let result = try runStallwatch(command + ["--metrics", "127.0.0.1:\(port)"] + tail)
            #expect(result.status == 73, "\(command): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "one line: \(result.stderr)")
            #expect(
                lines.first?.hasPrefix("stallwatch: error: cannot serve metrics on 127.0.0.1:\(port): bind:") == true)
            #expect(!result.stdout.contains("ran"), "the workload must not start")
        }
    }

    /// A real Prometheus server, started on a loopback port with a 500 ms scrape interval, scrapes the run: the
    /// counter it stored equals the stalls the run reported.
    @Test(.timeLimit(.minutes(1))) func prometheusScrapesTheCounterTheRunReports() throws {
        let prometheus = "/usr/bin/prometheus"
        try #require(FileManager.default.isExecutableFile(atPath: prometheus), "Scripts/install-test-tools installs it")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-prometheus-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Prometheus first, ready before the run, so that it scrapes the run from its start.
        let target = try FreePort.pick()
        let (server, apiPort) = try startPrometheus(prometheus, in: directory, target: target)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        // Its scrape manager applies targets every 5 s: the run starts once the target has been tried (and was down).
        let tried = waitFor(
            {
                let targets = FreePort.get(port: apiPort, path: "/api/v1/targets") ?? ""
                return targets.contains("\"health\":\"down\"") || targets.contains("\"health\":\"up\"")
            }, timeout: 15)
        try #require(tried, "Prometheus never scraped its target")
        let run = try metricsRun(address: "127.0.0.1:\(target)", stalls: 3, tail: "1.5")
        let result = try #require(run.result(timeout: 30))
        try #require(result.status == 0, "\(result.stderr)")
        let reported = try #require(try result.summary).stalls
        #expect(reported == 3)
        // The last value scraped (a counter's maximum) over the run; the series is stale once the run is gone.
        let answer = try #require(
            FreePort.get(
                port: apiPort, path: "/api/v1/query?query=sum(max_over_time(stallwatch_stalls_total%5B1m%5D))"))
        let body = try #require(
            try JSONSerialization.jsonObject(with: Data(httpBody(answer).utf8)) as? [String: Any], "\(answer)")
        let result0 = ((body["data"] as? [String: Any])?["result"] as? [[String: Any]])?.first
        let value = (result0?["value"] as? [Any])?.last as? String
        #expect(value.flatMap(Double.init) == Double(reported), "Prometheus answered \(answer)")
    }

    /// Starts Prometheus on a free loopback port, its data in `directory`, scraping 127.0.0.1:`target` every 500 ms;
    /// returns once it says it is ready.
    private func startPrometheus(_ path: String, in directory: URL, target: UInt16) throws -> (Process, UInt16) {
        let configuration = directory.appendingPathComponent("prometheus.yml")
        try """
        global:
          scrape_interval: 500ms
          scrape_timeout: 400ms
        scrape_configs:
          - job_name: stallwatch
            static_configs:
              - targets: ['127.0.0.1:\(target)']
        """.write(to: configuration, atomically: true, encoding: .utf8)
        for _ in 0..<3 {
            let port = try FreePort.pick()
            let server = Process()
            server.executableURL = URL(fileURLWithPath: path)
            server.arguments = [
                "--config.file=\(configuration.path)",
                "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)",
                "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
            ]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            if waitFor(
                { FreePort.get(port: port, path: "/-/ready")?.hasPrefix("HTTP/1.1 200") == true || !server.isRunning },
                timeout: 15),
                server.isRunning
            {
                return (server, port)
            }
            server.terminate()
            server.waitUntilExit()
        }
        throw FreePort.Failure(reason: "Prometheus did not start")
    }

    private func expectPromtoolAccepts(_ exposition: String) throws {
        let promtool = "/usr/bin/promtool"
        try #require(FileManager.default.isExecutableFile(atPath: promtool), "Scripts/install-test-tools installs it")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: promtool)
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(exposition.utf8))
        try input.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "promtool check metrics: \(said)")
    }
}
