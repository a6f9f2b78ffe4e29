// `stallwatch report` on the command line, and `--html`/`--export` on `run`, `demo` and `attach`.
import Foundation
import StallwatchExport
import Testing

@testable import StallwatchCLI

@Suite struct ReportParserTests {
    @Test func filesAndOptionsInAnyOrder() {
        let parsed = invocation(["report", "a.ndjson", "--format", "pprof", "b.ndjson", "--output=p.pb.gz", "-"])
        #expect(
            parsed == .report(ReportOptions(inputs: ["a.ndjson", "b.ndjson", "-"], format: .pprof, output: "p.pb.gz")))
    }

    @Test func textToStdoutByDefault() {
        guard case .report(let options)? = invocation(["report", "run.ndjson"]) else { return }
        #expect(options.primary == ExportRequest(format: .text, path: "-"))
    }

    @Test func onlyTheExportsWhenOnlyExportsAreAskedFor() {
        guard case .report(let options)? = invocation(["report", "--html", "s.html", "--export", "folded=f.txt", "x"])
        else { return }
        #expect(options.primary == nil)
        #expect(
            options.exports == [
                ExportRequest(format: .html, path: "s.html"), ExportRequest(format: .folded, path: "f.txt"),
            ])
    }

    @Test func afterTheTerminatorEverythingIsAFile() {
        #expect(
            invocation(["report", "--", "--odd-name", "-x"]) == .report(ReportOptions(inputs: ["--odd-name", "-x"])))
    }

    @Test func mistakesAreUsageErrors() {
        #expect(usageError(["report"])?.message == "Missing expected argument '<file> ...'")
        #expect(usageError(["report", "-", "-"])?.message == "Standard input ('-') can be read only once")
        #expect(usageError(["report", "--format", "svg", "x"])?.message.contains("  - speedscope") == true)
        #expect(usageError(["report", "--export", "pprof", "x"])?.message.contains("expected <format>=<file>") == true)
        #expect(usageError(["report", "--export", "gif=a", "x"])?.message.contains("unknown format 'gif'") == true)
        #expect(
            usageError(["report", "--frmat", "text", "x"])?.message
                == "Unknown option '--frmat'. Did you mean '--format'?")
    }

    @Test func runDemoAndAttachTakeExports() {
        guard case .run(let run)? = invocation(["run", "--html", "s.html", "--export", "trace=t.json", "--", "ls"]),
            case .attach(let attach)? = invocation(["attach", "--export", "pprof=p.pb.gz", "42"]),
            case .demo(let demo)? = invocation(["demo", "--html", "d.html"])
        else { return }
        #expect(run.watch.exports.map(\.format) == [.html, .trace])
        #expect(attach.watch.exports == [ExportRequest(format: .pprof, path: "p.pb.gz")])
        #expect(demo.watch.exports == [ExportRequest(format: .html, path: "d.html")])
    }

    @Test func helpForReport() {
        #expect(invocation(["report", "--help"]) == .help(.report))
        #expect(invocation(["help", "report"]) == .help(.report))
        #expect(HelpText.text(for: .root).contains("  report "))
    }
}

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
        #expect(OutputFile.method(for: path) == .replace)
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

    @Test func aSymlinkIsWrittenThroughNotReplaced() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let target = directory + "/target.txt"
        let link = directory + "/link.txt"
        try "old".write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(OutputFile.method(for: link) == .direct)
        try OutputFile.write(Array("through".utf8), to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "through")
    }

    @Test func devicesAndStdoutAreWrittenDirectly() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(OutputFile.method(for: "/dev/null") == .direct)
        #expect(OutputFile.method(for: "-") == .standardOutput)
        try OutputFile.write(Array("discarded".utf8), to: "/dev/null")
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(OutputFile.method(for: fifo) == .direct)
    }

    @Test func aMissingDirectoryIsAnErrorThatLeavesNothingBehind() {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: (any Error).self) { try OutputFile.write([1], to: directory + "/missing/out.pb.gz") }
    }
}
