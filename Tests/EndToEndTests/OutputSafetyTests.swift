// Files stallwatch writes are the user's: a device stays a device, a symlink stays a symlink, a report nobody got
// is a failed run, and a reader that stops reading never stops stallwatch.
import Foundation
import Glibc
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct OutputSafetyTests {
    /// A fresh directory of the test's own; every file these tests touch is in it.
    func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-out-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func fileType(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : nil
    }

    /// A device node of its own (major 1, `minor`: 3 is null, 7 is full), or nil where mknod is not allowed.
    func device(_ minor: UInt32, in directory: String) -> String? {
        let path = directory + "/device-\(minor)"
        // makedev(1, minor) for major 1, which is below 4096 and minor below 256.
        return mknod(path, S_IFCHR | 0o666, dev_t(1 << 8 | minor)) == 0 ? path : nil
    }

    @Test func junitOntoADeviceWritesThroughItAndKeepsTheDevice() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let null = try #require(device(3, in: directory), "mknod needs root, as CI is")
        let result = try runStallwatch(["demo", "--junit", null, "--", "--stalls", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(fileType(null) == S_IFCHR, "the device node was replaced")
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory)) == ["device-3"], "no temp left")
    }

    @Test func junitOntoASymlinkWritesItsTargetAndKeepsTheLink() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/reports", withIntermediateDirectories: true)
        try "old".write(toFile: directory + "/reports/junit.xml", atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: directory + "/link.xml", withDestinationPath: "reports/junit.xml")
        let result = try runStallwatch(["demo", "--junit", directory + "/link.xml", "--", "--stalls", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(fileType(directory + "/link.xml") == S_IFLNK)
        let written = try String(contentsOfFile: directory + "/reports/junit.xml", encoding: .utf8)
        #expect(written.hasPrefix("<?xml"), "the link's target holds the report")
    }

    @Test func junitToStandardOutputWhenTheReportsGoToAFile() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try runStallwatch(
            ["demo", "--output", directory + "/r.txt", "--junit", "-", "--", "--stalls", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("<?xml") && result.stdout.contains("<testsuites"))
        #expect(!FileManager.default.fileExists(atPath: "-") || fileType("-") != S_IFREG, "no file named '-'")
    }

    @Test func sameFileForReportsAndJUnitIsAUsageError() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let spelled = try runStallwatch(
            ["run", "--output", directory + "/x", "--junit", directory + "/./x", "--", "true"])
        #expect(spelled.status == 64, "\(spelled.stderr)")
        try "".write(toFile: directory + "/x", atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/y", withDestinationPath: directory + "/x")
        let linked = try runStallwatch(["run", "--output", directory + "/x", "--junit", directory + "/y", "--", "true"])
        #expect(linked.status == 64, "\(linked.stderr)")
        #expect(linked.stderr.contains("name the same file"))
    }

    @Test func reportOutputOntoItsOwnInputIsAUsageError() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = directory + "/stalls.ndjson"
        let records = RecordFixtures.stall() + "\n" + RecordFixtures.summary() + "\n"
        try records.write(toFile: input, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/link", withDestinationPath: input)
        for arguments in [
            ["report", "--output", input, input], ["report", "--output", directory + "/./link", input],
            ["report", input, "--html", directory + "/link"], ["report", "--export", "folded=\(input)", input],
        ] {
            let result = try runStallwatch(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("stallwatch: error: ") && result.stderr.contains("name the same file"))
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            #expect(try String(contentsOfFile: input, encoding: .utf8) == records, "the input is left as it was")
        }
        let elsewhere = try runStallwatch(["report", "--output", directory + "/summary.txt", input])
        #expect(elsewhere.status == 0, "another file is written: \(elsewhere.stderr)")
    }

    /// A SIGTERM (or Ctrl-C) while `report` writes its output: the temporary file beside the output is removed, and
    /// the signal still ends stallwatch. The signal is raised from inside the write, by an `fsync` preloaded into
    /// stallwatch, which it calls between writing the temporary file and renaming it over the output.
    @Test func aSignalWhileTheOutputIsWrittenLeavesNoTemporaryFile() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let preload = try compile(
            "#include <signal.h>\nint fsync(int descriptor) { (void)descriptor; raise(SIGTERM); return 0; }\n",
            language: "c", output: "libsignal-in-fsync.so", extraArguments: ["-shared", "-fPIC"])
        defer { try? FileManager.default.removeItem(at: preload) }
        let input = directory + "/stalls.ndjson"
        try (RecordFixtures.stall() + "\n").write(toFile: input, atomically: false, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = preload.appendingPathComponent("libsignal-in-fsync.so").path
        // Through sh, which starts stallwatch with no signal blocked: Process hands on the test thread's mask.
        let result = try runStallwatch(
            ["report", "--output", directory + "/summary.txt", input], environment: environment,
            throughShell: true)
        #expect(result.status == 128 + SIGTERM, "ended by the signal: \(result.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: directory + "/summary.txt"), "the signal came before the rename")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["stalls.ndjson"], "no temp left")
    }

    @Test func reportsThatCannotBeWrittenFailTheRun() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let full = try #require(device(7, in: directory), "mknod needs root, as CI is")
        let result = try runStallwatch(["demo", "--output", full, "--", "--stalls", "1"])
        #expect(result.status == 74, "a run whose reports were all lost is not a green run: \(result.stderr)")
        #expect(result.stderr.contains("cannot write reports"))
        let junit = try runStallwatch(["demo", "--junit", full, "--format", "json", "--", "--stalls", "1"])
        #expect(junit.status == 74, "\(junit.stderr)")
        #expect(try junit.summary?.exitStatus.value == 74, "the summary says the status it ends with")
    }

    /// A FIFO whose reader opens it and never reads: the pipe fills, and stallwatch must still honour --timeout.
    @Test func aReaderThatNeverReadsDoesNotHoldUpTheTimeout() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/reports"
        try #require(mkfifo(fifo, 0o600) == 0)
        // The reader: holds the FIFO open for reading for a minute and reads nothing.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "exec 3<\"$0\"; sleep 60", fifo]
        try reader.run()
        defer { reader.terminate() }
        let started = Date()
        let result = try runStallwatch(
            [
                "demo", "--format", "json", "--output", fifo, "--timeout", "4s", "--", "--stalls", "50", "--period",
                "0.7s",
            ],
            timeout: 60)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 124, "the timeout expired: \(result.stderr)")
        // 4 s, then the workload's exit and at most 2 s for the last records; blocked writes took the whole minute.
        #expect(elapsed < 30, "stallwatch took \(elapsed) s")
    }
}
