// The CLI's contract around the workload: exit statuses, errors, where output goes, what is not watched.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct CommandLineTests {
    @Test func exitStatusIsTheWorkloads() throws {
        #expect(try runStallwatch(["run", "--", "/bin/sh", "-c", "exit 3"]).status == 3)
        #expect(try runStallwatch(["run", "/bin/sh", "-c", "exit 0"]).status == 0)
    }

    @Test func killedWorkloadGives128PlusSignal() throws {
        #expect(try runStallwatch(["run", "--", "/bin/sh", "-c", "kill -9 $$"]).status == 137)
    }

    @Test func usageErrorsExit64WithOneClearLine() throws {
        let unknown = try runStallwatch(["run", "--treshold", "80ms", "--", "/bin/true"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("Error: Unknown option '--treshold'"))
        #expect(unknown.stderr.contains("Did you mean '--threshold'?"))
        for bad in ["0ms", "abc", "80", "-5ms"] {
            let result = try runStallwatch(["run", "--threshold", bad, "--", "/bin/true"])
            #expect(result.status == 64, "--threshold \(bad)")
            #expect(result.stderr.hasPrefix("Error: "), "--threshold \(bad): \(result.stderr)")
        }
        let missing = try runStallwatch(["run"])
        #expect(missing.status == 64)
    }

    @Test func missingOrUnrunnableCommand() throws {
        let notFound = try runStallwatch(["run", "--", "no-such-command-stallwatch"])
        #expect(notFound.status == 127)
        #expect(notFound.stderr.contains("command not found"))
        let directory = try runStallwatch(["run", "--", "/tmp"])
        #expect(directory.status == 126)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-not-exec-\(getpid())")
        try "echo hi".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let notExecutable = try runStallwatch(["run", "--", file.path])
        #expect(notExecutable.status == 126)
        #expect(notExecutable.stderr.contains("not executable"))
    }

    @Test func unwritableOutputFailsBeforeLaunching() throws {
        let result = try runStallwatch([
            "run", "--output", "/nonexistent-dir/stalls.ndjson", "--", "/bin/sh", "-c", "echo ran",
        ])
        #expect(result.status == 73)
        #expect(result.stderr.contains("cannot open --output file"))
        #expect(!result.stdout.contains("ran"), "the workload must not start")
    }

    @Test func helpAndVersion() throws {
        let help = try runStallwatch(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE:"))
        #expect(help.stdout.contains("SUBCOMMANDS:"))
        let runHelp = try runStallwatch(["help", "run"])
        #expect(runHelp.status == 0)
        #expect(runHelp.stdout.contains("--threshold"))
        let version = try runStallwatch(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.split(separator: ".").count == 3)
    }

    @Test func workloadWithoutRunLoopIsNamedAtExit() throws {
        let result = try runStallwatch(["run", "--format", "json", "--", "/bin/sh", "-c", "sleep 0.2"])
        #expect(result.status == 0)
        let warnings = try result.summary?.warnings ?? []
        #expect(warnings.contains { $0.contains("main run loop never ran") }, "\(warnings)")
        #expect(result.stderr.contains("main run loop never ran"))
    }

    @Test func jsonOnStdoutStaysParseableWhenTheWorkloadPrints() throws {
        let result = try runStallwatch([
            "run", "--format", "json", "--", "/bin/sh", "-c", "echo workload-stdout; echo workload-stderr >&2",
        ])
        #expect(result.status == 0)
        for line in result.stdout.split(separator: "\n") {
            #expect(line.hasPrefix("{"), "only JSON on stdout, found: \(line)")
        }
        #expect(result.stderr.contains("workload-stdout"), "the workload's stdout moved to stderr")
        #expect(result.stderr.contains("workload-stderr"))
    }

    @Test func outputFileGetsReportsAndTheWorkloadKeepsItsStreams() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-e2e-\(getpid()).ndjson")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "{\"event\":\"earlier\"}\n".write(toFile: path, atomically: true, encoding: .utf8)
        let result = try runStallwatch([
            "demo", "--scenario", "cpu", "--format", "json", "--output", path, "--", "--stalls", "1",
        ])
        #expect(result.status == 0)
        let records = try JSONLines.records(in: try String(contentsOfFile: path, encoding: .utf8))
        #expect(records.first?.event == "earlier", "--output appends")
        #expect(records.filter { $0.event == "stall" }.count == 1)
        #expect(records.last?.event == "summary")
        #expect(!result.stdout.contains("\"event\""), "no report on stdout with --output")
        #expect(result.stderr.contains("stallwatch-demo: stall"), "the workload's stderr passes through")
    }
}

/// Users are often not root: the unprivileged path runs stallwatch as `nobody` for real.
@Suite(.serialized) struct UnprivilegedTests {
    @Test func watchesAsAnOrdinaryUser() throws {
        let result = try runStallwatch(
            ["demo", "--scenario", "cpu", "--format", "json", "--", "--stalls", "1"], asUser: "nobody")
        #expect(result.status == 0, "\(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)\n\(result.stderr)")
        #expect(stall.capture.method == "ptrace", "a parent may trace its child")
        #expect(stall.symbols.contains { $0.contains("ChecksumEngine.crunchChecksums") })
    }

    @Test func fallsBackToInProcessCaptureWhenPtraceIsRefused() throws {
        let result = try runStallwatch(
            ["demo", "--scenario", "cpu", "--format", "json", "--", "--stalls", "1", "--forbid-ptrace"],
            asUser: "nobody")
        #expect(result.status == 0, "\(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)\n\(result.stderr)")
        let capture = stall.capture
        #expect(capture.method == "signal")
        let note = capture.note ?? ""
        #expect(note.contains("ptrace was not permitted"), "\(note)")
        #expect(note.contains("non-dumpable"), "the advice names the cause: \(note)")
        #expect(stall.symbols.contains { $0.contains("ChecksumEngine.crunchChecksums") }, "\(stall.symbols)")
        #expect(try result.stalls.count == 1 && (stall.durationMs.value ?? 0) > 500)
    }
}

@Suite(.serialized) struct SignalTests {
    /// SIGTERM to stallwatch reaches the workload; stallwatch still writes the summary and returns the
    /// workload's status (128 + SIGTERM).
    @Test func terminationIsForwardedAndTheRunStillCloses() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = ["demo", "--format", "json", "--", "--stalls", "5", "--period", "2s"]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 1.5)
        process.terminate()
        let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGTERM)
        let summary = try JSONLines.records(in: output).last
        #expect(summary?.event == "summary")
        #expect(summary?.summary?.exitStatus == .value(Int(128 + SIGTERM)))
    }
}
