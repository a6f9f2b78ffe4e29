// What `stallwatch report` is handed to read may be anything a path can name: a line without an end, a FIFO that
// nobody writes. It reads what it can in bounded memory, and says what it waits for.
import Foundation
import Glibc
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct ReportInputTests {
    /// A fresh directory of the test's own; every file these tests touch is in it.
    func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-in-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs stallwatch with stdout and stderr in files of `directory`; its status and, from `wait4`, the most
    /// memory it held resident (bytes): Process reaps its children itself and cannot say.
    func runMeasured(_ arguments: [String], in directory: String) throws -> (result: RunResult, maxResident: Int) {
        let output = directory + "/stdout"
        let errors = directory + "/stderr"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([Products.stallwatch] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Products.stallwatch, &actions, nil, argv, environ)
        try #require(spawned == 0, "posix_spawn: \(String(cString: strerror(spawned)))")
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let result = RunResult(
            stdout: try String(contentsOfFile: output, encoding: .utf8),
            stderr: try String(contentsOfFile: errors, encoding: .utf8),
            status: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
        return (result, usage.ru_maxrss * 1024)
    }

    /// `report /dev/zero` held every byte of its one line (5.1 GB in 20 s): a line is read up to the limit (32 MiB),
    /// then skipped to its newline, named once, and the records after it are read.
    @Test func aLineWithoutAnEndIsSkippedInBoundedMemory() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let input = directory + "/zeros.ndjson"
        // A sparse gigabyte of NUL bytes and no newline (read from the page cache's zero page: no disk, no time),
        // then a record.
        let descriptor = open(input, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        let lineLength = 1 << 30
        try #require(ftruncate(descriptor, off_t(lineLength)) == 0)
        let record = Array(("\n" + RecordFixtures.stall() + "\n").utf8)
        try #require(pwrite(descriptor, record, record.count, off_t(lineLength)) == record.count)
        close(descriptor)
        let (result, maxResident) = try runMeasured(["report", input], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("1 stall "), "the record after the long line is read: \(result.stdout)")
        let warnings = result.stderr.split(separator: "\n")
        #expect(
            warnings == [
                "stallwatch: warning: '\(input)' line 1 is longer than 32 MiB, which no stallwatch record is: skipped"
            ],
            "one warning naming the input and the line: \(result.stderr)")
        // The limit, a read chunk and the runtime; a quarter of the line, which the reader used to hold whole.
        #expect(!Sanitizer.memoryIsMeasurable || maxResident < lineLength / 4, "\(maxResident >> 20) MiB resident")
    }

    /// Opening a FIFO waits for a writer, as `cat` does; after a second stallwatch says what it waits for, and it
    /// reads what the writer writes once one comes.
    @Test func aFIFOWithoutAWriterIsWaitedForWithANote() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/records.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = ["report", fifo]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The note, read as it comes; a busy machine may take a while to start stallwatch, so the wait is long.
        var said = Data()
        let deadline = Date().addingTimeInterval(60)
        while !String(decoding: said, as: UTF8.self).contains("\n"), Date() < deadline, process.isRunning {
            var request = pollfd(fd: errors.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            if poll(&request, 1, 200) > 0 { said += errors.fileHandleForReading.availableData }
        }
        let note = String(decoding: said, as: UTF8.self)
        #expect(
            note
                == "stallwatch: waiting for the FIFO '\(fifo)' to be written: it is read until its last writer closes it\n",
            "\(note)")
        // A writer comes (the open waits for stallwatch's end, which is there: no hang), writes, and goes.
        let writer = try #require(FileHandle(forWritingAtPath: fifo))
        writer.write(Data((RecordFixtures.stall() + "\n").utf8))
        try writer.close()
        let summary = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(summary.hasPrefix("1 stall "), "\(summary)")
    }
}
