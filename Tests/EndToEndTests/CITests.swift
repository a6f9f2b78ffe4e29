// stallwatch in CI: budgets and their exit status, baselines, timeouts, JUnit, and surviving a SIGKILL.
import Foundation
import StallwatchTestSupport
import Testing

/// A scratch file path, removed by the caller.
func scratchFile(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-ci-\(UUID().uuidString)-\(name)").path
}

@Suite(.serialized) struct CITests {
    @Test func anyStallBreaksFailOnStall() throws {
        let result = try runStallwatch(["demo", "--fail-on-stall", "--", "--stalls", "1"])
        #expect(result.status == 80)
        #expect(result.stdout.contains("stall budget broken: 1 stall (--fail-on-stall)"), "\(result.stdout)")
    }

    @Test func stallsWithinTheirLimitsPass() throws {
        let result = try runStallwatch([
            "demo", "--format", "json", "--max-stall", "2s", "--max-stalls", "2", "--max-total", "5s", "--",
            "--stalls", "2",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let budget = try #require(try result.summary?.budget)
        #expect(budget.broken == false)
    }

    @Test func eachLimitBreaksOnItsOwn() throws {
        for limit in [["--max-stall", "300ms"], ["--max-stalls", "1"], ["--max-total", "1s"]] {
            let result = try runStallwatch(["demo", "--format", "json"] + limit + ["--", "--stalls", "2"])
            #expect(result.status == 80, "\(limit)")
            let violations = try result.summary?.budget?.violations ?? []
            #expect(violations.count == 1 && violations[0].contains(limit[0]), "\(violations)")
        }
    }

    @Test func theWorkloadsOwnFailureWins() throws {
        let script = "\(Products.demo) --stalls 1; exit 3"
        let result = try runStallwatch(["run", "--fail-on-stall", "--", "/bin/sh", "-c", script])
        #expect(result.status == 3)
    }

    @Test func baselineExcusesKnownStallsOnly() throws {
        let baseline = scratchFile("baseline.ndjson")
        defer { try? FileManager.default.removeItem(atPath: baseline) }
        let first = try runStallwatch(["demo", "--format", "json", "--output", baseline, "--", "--stalls", "1"])
        #expect(first.status == 0)
        let known = try runStallwatch([
            "demo", "--format", "json", "--baseline", baseline, "--fail-on-stall", "--", "--stalls", "2",
        ])
        #expect(known.status == 0, "the same stall is known: \(known.stdout)")
        #expect(try known.summary?.budget?.excusedByBaseline == 2)
        let new = try runStallwatch([
            "demo", "--scenario", "sleep", "--baseline", baseline, "--fail-on-stall", "--", "--stalls", "1",
        ])
        #expect(new.status == 80, "a different stall is not in the baseline")
    }

    @Test func deadlockWithTimeoutIsReportedWithItsStack() throws {
        let output = scratchFile("deadlock.ndjson")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let started = Date()
        let result = try runStallwatch([
            "demo", "--scenario", "mutex", "--timeout", "2s", "--format", "json", "--output", output, "--",
            "--stalls", "1", "--duration", "60s", "--period", "70s",
        ])
        #expect(result.status == 124)
        #expect(Date().timeIntervalSince(started) < 15, "stopped at the timeout, not at the stall's end")
        let records = try JSONLines.records(in: try String(contentsOfFile: output, encoding: .utf8))
        let stall = try #require(records.compactMap(\.stall).first)
        #expect(stall.unfinished == true)
        #expect(stall.culprit?.symbol == "AccountStore.waitForAccountLock()")
        let summary = try #require(records.last?.summary)
        #expect(summary.timedOut == true)
        #expect(summary.exitStatus == .value(124))
    }

    /// `--timeout` stops what the workload started as well as the workload: its whole process group.
    @Test func timeoutStopsTheWorkloadsChildrenToo() throws {
        // The child keeps none of its parent's descriptors: the harness waits for the end of every copy of them.
        let directory = try compile(
            """
            #include <stdio.h>
            #include <unistd.h>
            int main(int argc, char **argv) {
                pid_t child = fork();
                if (child == 0) {
                    for (int fd = 0; fd < 1024; fd++) close(fd);
                    sleep(100);
                    _exit(0);
                }
                FILE *file = fopen(argv[1], "w");
                fprintf(file, "%d\\n", child);
                fclose(file);
                sleep(100);
                return 0;
            }
            """, language: "c", output: "forker")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pidFile = directory.appendingPathComponent("child.pid").path
        let result = try runStallwatch([
            "run", "--timeout", "1s", "--", directory.appendingPathComponent("forker").path, pidFile,
        ])
        #expect(result.status == 124)
        let text = try String(contentsOfFile: pidFile, encoding: .utf8)
        let child = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { if processState(child).map({ $0 != "Z" }) ?? false { kill(child, SIGKILL) } }
        // SIGTERM takes a moment to land on a loaded machine; a child that was never signalled sleeps on for 100 s.
        let deadline = Date().addingTimeInterval(5)
        while let state = processState(child), state != "Z", Date() < deadline { usleep(10_000) }
        let state = processState(child)
        #expect(state == nil || state == "Z", "the workload's child (pid \(child)) still runs")
    }

    /// Under `--timeout` the workload's own process group takes the terminal from stallwatch's: it reads the
    /// terminal as it would without stallwatch, not stopped as a background job (`script` gives it a terminal).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func workloadInItsOwnGroupStillReadsTheTerminal() throws {
        let script = Process()
        script.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        script.arguments = [
            "-qec", "\(Products.stallwatch) run --timeout 20s -- /bin/sh -c 'read line; echo read:$line'", "/dev/null",
        ]
        let input = Pipe()
        let output = Pipe()
        script.standardInput = input
        script.standardOutput = output
        script.standardError = output
        try script.run()
        input.fileHandleForWriting.write(Data("hello\n".utf8))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        script.waitUntilExit()
        input.fileHandleForWriting.closeFile()
        #expect(text.contains("read:hello"), "\(text)")
        #expect(text.contains("exit status 0"), "\(text)")
    }

    @Test func junitReportIsValidAndCarriesTheStack() throws {
        let junit = scratchFile("junit.xml")
        defer { try? FileManager.default.removeItem(atPath: junit) }
        let result = try runStallwatch(["demo", "--junit", junit, "--fail-on-stall", "--", "--stalls", "2"])
        #expect(result.status == 80)
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(try xmllintSchemaStatus(of: junit) == 0, "valid against Tests/Fixtures/junit.xsd")
        #expect(xml.contains(#"tests="2" failures="2""#), "the run and the one distinct stall fail")
        #expect(xml.contains("ChecksumEngine.crunchChecksums"))
        #expect(xml.contains("__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__"), "the stack")
    }

    @Test func badCIFilesFailBeforeLaunching() throws {
        let junit = try runStallwatch(["run", "--junit", "/nonexistent-dir/j.xml", "--", "/bin/true"])
        #expect(junit.status == 73)
        let baseline = try runStallwatch(["run", "--baseline", "/nonexistent-file.ndjson", "--", "/bin/true"])
        #expect(baseline.status == 66)
        #expect(baseline.stderr.contains("cannot read --baseline file"))
    }

    /// SIGKILL to stallwatch mid-stall: the stall is already in the file, and the workload neither stays
    /// stopped nor runs on without it.
    @Test func sigkillLosesNoDetectedStallAndLeavesNoOrphan() throws {
        let output = scratchFile("killed.ndjson")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = [
            "demo", "--format", "json", "--output", output, "--", "--stalls", "1", "--duration", "30s",
            "--period", "40s",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline,
            !((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("stall-detected")
        {
            usleep(50_000)
        }
        let demo = try #require(childPid(of: process.processIdentifier), "the demo is stallwatch's child")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let records = try JSONLines.records(in: try String(contentsOfFile: output, encoding: .utf8))
        let detected = try #require(records.compactMap(\.detected).first)
        #expect(detected.culprit?.symbol?.contains("ChecksumEngine") == true)
        // The demo ends with its collector (it would otherwise burn CPU for 30 s more).
        let gone = Date().addingTimeInterval(5)
        while Date() < gone, processState(demo).map({ $0 != "Z" }) == true { usleep(50_000) }
        let state = processState(demo)
        #expect(state == nil || state == "Z", "the workload is gone, not running or stopped (state \(state ?? "-"))")
    }
}

/// The first child of `pid`, from /proc.
func childPid(of pid: Int32) -> Int32? {
    guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/task/\(pid)/children"),
        let data = try? handle.readToEnd()
    else { return nil }
    return String(decoding: data, as: UTF8.self).split(separator: " ").first.flatMap { Int32($0) }
}

/// The state letter of a process, or nil once it is reaped.
func processState(_ pid: Int32) -> Character? {
    guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/stat"), let data = try? handle.readToEnd() else {
        return nil
    }
    let text = String(decoding: data, as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return nil }
    return text[text.index(after: close)...].split(separator: " ").first?.first
}

/// Runs xmllint against the JUnit schema fixture; 0 means valid.
func xmllintSchemaStatus(of file: String) throws -> Int32 {
    let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/junit.xsd").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/xmllint")
    process.arguments = ["--noout", "--schema", schema, file]
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

@Suite(.serialized) struct BusyPeriodTests {
    @Test func manyHiccupsFailMaxP99ThoughNoneIsAStall() throws {
        let result = try runStallwatch(["demo", "--scenario", "hiccups", "--format", "json", "--max-p99", "100ms"])
        #expect(result.status == 80, "\(result.stderr)")
        #expect(try result.stalls.isEmpty, "150 ms callouts are not stalls")
        let periods = try #require(try result.summary?.busyPeriods)
        #expect((periods.p99Ms ?? 0) >= 150)
        #expect((periods.atLeastThreshold ?? 0) >= 5)
        let violations = try result.summary?.budget?.violations ?? []
        #expect(violations.first?.contains("--max-p99") == true)
    }

    @Test func smoothRunPassesMaxP99() throws {
        let result = try runStallwatch(["demo", "--scenario", "baseline", "--format", "json", "--max-p99", "50ms"])
        #expect(result.status == 0, "\(result.stdout)")
        let periods = try #require(try result.summary?.busyPeriods)
        #expect(periods.count > 50, "every busy period of the run is counted")
        #expect((periods.p99Ms ?? 100) < 50)
    }
}
