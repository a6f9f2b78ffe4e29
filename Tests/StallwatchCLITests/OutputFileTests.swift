// Output files of `report`, `--html` and `--export`, written by StallwatchSystem's OutputFile: a regular file whole or
// not at all, a symlink kept, devices and FIFOs in place.
import Foundation
import StallwatchSystem
import Testing

@Suite struct OutputFileTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-out-\(UUID())").path

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    @Test func aRegularFileIsReplacedWholeAndNoTemporaryFileStays() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/report.html"
        try "old".write(toFile: path, atomically: false, encoding: .utf8)
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        #expect(OutputFile.method(for: path) == .replace(path: path, directory: directory, mode: 0o644))
        try OutputFile.write(Array("new page".utf8), to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new page")
        let after = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        #expect(before != after, "written to a new file and renamed over the old one")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["report.html"])
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o644)
    }

    @Test func aNewFileGetsTheUsualPermissions() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/new.json"
        try OutputFile.write(Array("{}".utf8), to: path)
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions.map { $0 & 0o600 } == 0o600)
        #expect(permissions.map { $0 & 0o077 } != 0o077, "not world-writable")
    }

    @Test func aSymlinkStaysALinkAndItsTargetIsReplaced() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let target = directory + "/target.txt"
        let link = directory + "/link.txt"
        try "old".write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        guard case .replace(let path, _, _) = OutputFile.method(for: link) else {
            Issue.record("a link to a regular file: its target is replaced")
            return
        }
        #expect(path.hasSuffix("/target.txt"))
        try OutputFile.write(Array("through".utf8), to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "through")
    }

    @Test func devicesAndStdoutAreWrittenDirectly() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(OutputFile.method(for: "/dev/null") == .direct(path: "/dev/null"))
        #expect(OutputFile.method(for: "-") == .standardOutput)
        try OutputFile.write(Array("discarded".utf8), to: "/dev/null")
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(OutputFile.method(for: fifo) == .direct(path: fifo))
    }

    @Test func aMissingDirectoryIsAnErrorThatLeavesNothingBehind() {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: (any Error).self) { try OutputFile.write([1], to: directory + "/missing/out.pb.gz") }
    }
}
