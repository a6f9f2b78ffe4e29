// `stallwatch report` on the records of real demo runs, read back by the real consumers: go tool pprof, Chromium.
import Foundation
import StallwatchTestSupport
import Testing

/// Two demo runs on two "hosts": the mutex scenario on host-a, the CPU one on host-b, one stall each.
enum DemoRecords {
    static let mutexCulprit = "AccountStore.waitForAccountLock()"
    static let cpuCulprit = "ChecksumEngine.crunchChecksums"

    static let files: [String] = {
        var files: [String] = []
        for (scenario, host) in [("mutex", "host-a"), ("cpu", "host-b")] {
            let path = scratchFile("\(scenario).ndjson")
            var environment = ProcessInfo.processInfo.environment
            environment["STALLWATCH_HOST"] = host
            _ = try? runStallwatch(
                ["demo", "--scenario", scenario, "--format", "json", "--output", path, "--", "--stalls", "1"],
                environment: environment)
            files.append(path)
        }
        return files
    }()

    static func stalls(in path: String) throws -> [StallRecord] {
        try JSONLines.records(in: String(contentsOfFile: path, encoding: .utf8)).compactMap(\.stall)
    }
}

/// A test-only tool (Scripts/install-test-tools installs it): present, or absent, which fails under CI.
enum TestTool {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    static func path(_ name: String, candidates: [String]) -> String? {
        candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let go = path("go", candidates: ["/usr/bin/go", "/usr/lib/go/bin/go", "/usr/local/go/bin/go"])
    static let chromium = path("chromium", candidates: ["/usr/bin/chromium", "/usr/bin/chromium-browser"])

    /// Runs only where the tool is, or always under CI (where its absence must fail, not skip).
    static func available(_ path: String?) -> Bool { path != nil || isCI }

    /// Runs a tool to its end; its stdout, stderr and status.
    static func run(_ executable: String, _ arguments: [String]) throws -> RunResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = scratchFile("tool.out")
        let errors = scratchFile("tool.err")
        FileManager.default.createFile(atPath: output, contents: nil)
        FileManager.default.createFile(atPath: errors, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: errors)
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return RunResult(
            stdout: try String(contentsOfFile: output, encoding: .utf8),
            stderr: try String(contentsOfFile: errors, encoding: .utf8), status: process.terminationStatus)
    }
}

@Suite(.serialized) struct ReportTests {
    @Test func twoRunsOnTwoHostsMergeIntoOneSummary() throws {
        let files = DemoRecords.files
        #expect(try DemoRecords.stalls(in: files[0]).map(\.host) == ["host-a"])
        #expect(try DemoRecords.stalls(in: files[1]).map(\.host) == ["host-b"])
        let result = try runStallwatch(["report"] + files)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("2 stalls ("), "\(result.stdout)")
        #expect(result.stdout.contains(" in 2 runs on 2 hosts, 2 fingerprints, from 2 inputs"), "\(result.stdout)")
        #expect(result.stdout.contains(DemoRecords.mutexCulprit) && result.stdout.contains(DemoRecords.cpuCulprit))
        #expect(result.stdout.contains("(host-a)") && result.stdout.contains("(host-b)"))
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test(.enabled(if: TestTool.available(TestTool.go), "go tool pprof (Debian golang-go) is not installed"))
    func pprofTopListsTheCulpritWithItsShare() throws {
        let go = try #require(TestTool.go, "go is missing: Scripts/install-test-tools installs golang-go")
        let files = DemoRecords.files
        let profile = scratchFile("stalls.pb.gz")
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let written = try runStallwatch(["report", "--format", "pprof", "--output", profile] + files)
        #expect(written.status == 0, "\(written.stderr)")
        let top = try TestTool.run(go, ["tool", "pprof", "-top", profile])
        #expect(top.status == 0, "\(top.stderr)")
        let durations = try files.map { try DemoRecords.stalls(in: $0).compactMap(\.durationMs.value).reduce(0, +) }
        let expected = durations[0] / durations.reduce(0, +) * 100
        // `flat flat% sum% cum cum% name`: the culprit's cumulative share is its stall's share of stalled time.
        let line = try #require(
            top.stdout.split(separator: "\n").first { $0.hasSuffix(" " + DemoRecords.mutexCulprit) },
            "\(top.stdout)")
        let columns = line.split(separator: " ")
        let cumulative = try #require(Double(columns[4].dropLast()), "\(line)")
        #expect(abs(cumulative - expected) < 1, "\(line) against \(expected)%")
        #expect(top.stdout.contains("Type: stalled"), "\(top.stdout)")
        #expect(top.stdout.contains(DemoRecords.cpuCulprit))
    }

    @Test func foldedSpeedscopeAndTraceParse() throws {
        let files = DemoRecords.files
        let folded = try runStallwatch(["report", "--format", "folded"] + files)
        let lines = folded.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("_start;") && $0.contains(DemoRecords.mutexCulprit + ";") })
        #expect(lines.allSatisfy { Int($0.split(separator: " ").last ?? "") != nil })
        let speedscope = try runStallwatch(["report", "--format", "speedscope"] + files)
        let file = try #require(
            try JSONSerialization.jsonObject(with: Data(speedscope.stdout.utf8)) as? [String: Any])
        #expect((file["profiles"] as? [Any])?.count == 2)
        let trace = try runStallwatch(["report", "--format", "trace"] + files)
        let events = try #require(
            (try JSONSerialization.jsonObject(with: Data(trace.stdout.utf8)) as? [String: Any])?["traceEvents"]
                as? [[String: Any]])
        #expect(events.filter { $0["ph"] as? String == "X" }.count == 2)
        #expect(events.filter { $0["name"] as? String == "thread_name" }.count == 2)
    }

    @Test func badInputsAreNamedAndTheRestIsReported() throws {
        let files = DemoRecords.files
        let damaged = scratchFile("damaged.ndjson")
        let empty = scratchFile("empty.txt")
        defer {
            try? FileManager.default.removeItem(atPath: damaged)
            try? FileManager.default.removeItem(atPath: empty)
        }
        let good = try String(contentsOfFile: files[0], encoding: .utf8)
        try (good + "garbage\n" + String(good.prefix(200))).write(toFile: damaged, atomically: true, encoding: .utf8)
        try "hello\nworld\n".write(toFile: empty, atomically: true, encoding: .utf8)
        let result = try runStallwatch(["report", damaged, empty, files[1]])
        #expect(result.status == 65, "\(result.stderr)")
        let lineCount = good.split(separator: "\n").count
        #expect(
            result.stderr.contains("warning: \(damaged): skipped lines that are not JSON (line \(lineCount + 1))"),
            "\(result.stderr)")
        #expect(result.stderr.contains("skipped a last line cut short (line \(lineCount + 2))"), "\(result.stderr)")
        #expect(result.stderr.contains("error: '\(empty)' has no stallwatch records (2 lines)"), "\(result.stderr)")
        #expect(result.stdout.contains(DemoRecords.mutexCulprit) && result.stdout.contains(DemoRecords.cpuCulprit))
        let missing = try runStallwatch(["report", "/nonexistent.ndjson"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("cannot read '/nonexistent.ndjson': No such file or directory"))
    }
}
