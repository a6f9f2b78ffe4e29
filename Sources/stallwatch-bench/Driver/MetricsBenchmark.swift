// #29: what `--metrics` costs the watched loop when Prometheus scrapes it every 500 ms.
import Foundation

/// Runs the tight loop under `stallwatch run --metrics 127.0.0.1:0` twice a round: scraped every 500 ms by the
/// driver (as a Prometheus server would), and not scraped; both with the endpoint listening, so the ratio is the
/// scrapes' cost alone.
///
/// The two runs of a round go back to back, the order reversed every other round; a ratio is the median of the
/// per-round ratios, per second of the loop's CPU and per second of wall clock (on 2 cores a scrape takes CPU that the
/// loop might have had).
struct MetricsBenchmark {
    let products: BuildProducts
    let rounds: Int
    let seconds: Double

    static let scrapeInterval = 0.5

    /// One run: the loop's throughput, and (scraped) how many scrapes it took and how long each round trip was.
    struct Run {
        let result: WorkloadResult
        let scrapes: Int
        let roundTrips: [Double]
    }

    func run() throws(BenchError) -> SectionReport {
        var scraped: [Run] = []
        var unscraped: [Run] = []
        for round in 1...rounds {
            for scraping in round.isMultiple(of: 2) ? [false, true] : [true, false] {
                BenchOutput.progress("metrics: round \(round)/\(rounds), \(scraping ? "scraped" : "not scraped")")
                let run = try measure(scraping: scraping)
                if scraping { scraped.append(run) } else { unscraped.append(run) }
            }
        }
        let perCPU = zip(scraped, unscraped).map { $0.result.perCPUSecond / $1.result.perCPUSecond }
        let wall = zip(scraped, unscraped).map { $0.result.perSecond / $1.result.perSecond }
        func spread(_ values: [Double]) -> String {
            "\(Format.fixed(values.median, 3)) [\(Format.fixed(values.min() ?? 0, 3))–\(Format.fixed(values.max() ?? 0, 3))]"
        }
        let trips = scraped.flatMap(\.roundTrips)
        var table = ResultTable(
            "Metrics scraped every \(Format.fixed(Self.scrapeInterval, 1)) s: \(rounds) alternating rounds of"
                + " \(Format.fixed(seconds, 1)) s tight-loop runs under `run --metrics`; scraped/not scraped = median of"
                + " the per-round ratios [lowest–highest]",
            header: [
                "workload", "not scraped", "scraped/not scraped", "scraped/not scraped, wall clock", "scrapes per run",
                "scrape round trip, median [max]", "target", "result",
            ])
        // "No measurable cost": the ratio's spread reaches 1, or it is within a percent of it.
        let noCost = (perCPU.max() ?? 0) >= 1 || perCPU.median >= 0.99
        let check = TargetCheck(
            "tight-loop throughput, scraped/not scraped", measured: spread(perCPU), target: "no measurable cost",
            met: noCost, limit: "run-to-run noise; a scrape renders on stallwatch's endpoint thread, not the workload's"
        )
        table.add([
            BenchCommand.Workload.tightLoop.rawValue, Format.rate(unscraped.map(\.result.perCPUSecond).median),
            spread(perCPU), spread(wall), "\(scraped.map(\.scrapes).min() ?? 0)–\(scraped.map(\.scrapes).max() ?? 0)",
            "\(Format.fixed(trips.median * 1000, 2)) ms [\(Format.fixed((trips.max() ?? 0) * 1000, 2)) ms]",
            check.target, check.verdict,
        ])
        var report = SectionReport()
        report.tables.append(table)
        report.targets.append(check)
        report.lines.append("tight-loop throughput ratio, scraped/not scraped: \(Format.fixed(perCPU.median, 3))")
        return report
    }

    private func measure(scraping: Bool) throws(BenchError) -> Run {
        let command = [
            products.stallwatch, "run", "--metrics", "127.0.0.1:0", "--format", "json", "--output", "/dev/null", "--",
            products.bench, BenchCommand.Workload.tightLoop.rawValue, "--seconds", "\(seconds)",
        ]
        let child = try ChildProcess(command)
        let line = try child.waitForLine(fromStandardError: true, timeout: 20) { $0.contains("serving metrics on") }
        guard let port = line.split(separator: ":").last.flatMap({ UInt16($0.prefix { $0.isNumber }) }) else {
            throw BenchError("no port in '\(line)'")
        }
        var scrapes = 0
        var roundTrips: [Double] = []
        if scraping {
            // Until the endpoint is gone with the run.
            while true {
                MonotonicClock.sleep(seconds: Self.scrapeInterval)
                let started = MonotonicClock.now()
                guard let answer = Self.scrape(port: port) else { break }
                guard answer.hasPrefix("HTTP/1.1 200 OK") else { throw BenchError("a scrape answered '\(answer)'") }
                roundTrips.append(Double(MonotonicClock.now() - started) / 1e9)
                scrapes += 1
            }
        }
        let status = try child.wait(timeout: seconds + 30)
        guard status == 0, let result = WorkloadResult(output: child.standardOutput + child.standardError) else {
            throw BenchError("\(command.joined(separator: " ")) exited with \(status): \(child.standardError)")
        }
        return Run(result: result, scrapes: scrapes, roundTrips: roundTrips)
    }

    /// `GET /metrics` from 127.0.0.1:`port`: the whole answer, or nil once nothing listens.
    static func scrape(port: UInt16) -> String? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return nil }
        let request = Array("GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        return answer.isEmpty ? nil : String(decoding: answer, as: UTF8.self)
    }
}
