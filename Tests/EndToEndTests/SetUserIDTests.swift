// A set-user-ID-root app that links the agent, run by an unprivileged user who chose its environment: the agent
// honours none of stallwatch's variables there (threat-model.md, "The environment of a set-user-ID program").
import Foundation
import StallwatchTestSupport
import Testing

/// The library-mode fixture app installed set-user-ID root in a directory `nobody` can reach, with an absolute run
/// path (the loader ignores `$ORIGIN` in a secure-execution program), beside programs that leave a mark if run.
struct SetUserIDApp {
    let directory: String
    let app: String
    /// A program that creates `marks/NAME` when it runs: what a hostile caller would name as helper or symbolizer.
    func marker(_ name: String) -> String { directory + "/mark-" + name }
    func marked(_ name: String) -> Bool { FileManager.default.fileExists(atPath: directory + "/marks/" + name) }

    init() throws {
        let built = try LibraryUserApp.built.get()
        let manager = FileManager.default
        directory = manager.temporaryDirectory.appendingPathComponent("stallwatch-setuid-\(UUID().uuidString)").path
        try manager.createDirectory(atPath: directory + "/marks", withIntermediateDirectories: true)
        chmod(directory, 0o755)
        chmod(directory + "/marks", 0o777)
        app = directory + "/app"
        let products = (built as NSString).deletingLastPathComponent
        try manager.copyItem(atPath: built, toPath: app)
        try manager.copyItem(atPath: products + "/libStallwatchAgent.so", toPath: directory + "/libStallwatchAgent.so")
        let runPath = try Self.patchelf(["--print-rpath", app]).trimmingCharacters(in: .whitespacesAndNewlines)
        let absolute = runPath.replacingOccurrences(of: "$ORIGIN", with: directory)
        _ = try Self.patchelf(["--set-rpath", absolute, app])
        #expect(chown(app, 0, 0) == 0)
        #expect(chmod(app, 0o4755) == 0)
        for name in ["helper", "symbolizer"] {
            let script = "#!/bin/sh\n/usr/bin/touch '\(directory)/marks/\(name)'\n"
            manager.createFile(
                atPath: marker(name), contents: Data(script.utf8), attributes: [.posixPermissions: 0o755])
        }
    }

    private static func patchelf(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/patchelf")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PatchelfFailed(arguments: arguments) }
        return text
    }

    struct PatchelfFailed: Error {
        let arguments: [String]
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

@Suite(.serialized) struct SetUserIDTests {
    @Test(.enabled(if: getuid() == 0, "needs root to install a set-user-ID-root program and become nobody"))
    func aSetUserIDAppHonoursNoneOfItsCallersVariables() throws {
        let installed = try SetUserIDApp()
        defer { installed.remove() }
        // A directory only root may enter: the caller names it as its runtime directory to make root create there.
        let rootOnly = installed.directory + "/root-only"
        try FileManager.default.createDirectory(atPath: rootOnly, withIntermediateDirectories: false)
        chmod(rootOnly, 0o700)
        // A port the caller asks root to open: the app scrapes it before stopping, and must find nothing there.
        let port = try FreePort.pick()
        let run = try LibraryUserApp.run(
            ["--scrape", "\(port)"], executable: installed.app, asNobody: true,
            environment: [
                "STALLWATCH_HELPER": installed.marker("helper"),
                "STALLWATCH_SYMBOLIZER": installed.marker("symbolizer"),
                "STALLWATCH_LISTEN": "1", "XDG_RUNTIME_DIR": rootOnly, "PATH": installed.directory,
                "STALLWATCH_METRICS": "127.0.0.1:\(port)",
            ], capturingStderr: true)
        #expect(run.status == 0)
        #expect(!installed.marked("helper"), "the caller's STALLWATCH_HELPER ran as root")
        #expect(!installed.marked("symbolizer"), "the caller's STALLWATCH_SYMBOLIZER ran as root")
        #expect(!FileManager.default.fileExists(atPath: rootOnly + "/stallwatch"), "root listened where told")
        #expect(run.line("app-metrics")?["status"] == "", "root served STALLWATCH_METRICS: \(run.stderr)")
        #expect(!run.stderr.contains("STALLWATCH_METRICS") && !run.stderr.contains("serving metrics"), "\(run.stderr)")
        // Still watched, without stacks, and each report says why; the app's sleep was not interrupted.
        try #require(run.stalls.count == 2, "\(run.stalls.map(\.capture.note))")
        for stall in run.stalls {
            #expect(stall.capture.method == "none")
            #expect(stall.capture.note?.contains("AT_SECURE") == true, "\(stall.capture.note ?? "")")
            #expect(stall.samples.isEmpty)
        }
        #expect(try #require(run.sleptMs) >= 490)
    }

    @Test func theCaptureHelperRunsNoSymbolizerTheCallerNamed() throws {
        // Outside a set-user-ID program the helper is still the caller's to choose (STALLWATCH_HELPER), but what it
        // runs in turn is not: its environment has no STALLWATCH_SYMBOLIZER, LD_* or caller PATH.
        let installed = try SetUserIDApp()
        defer { installed.remove() }
        let run = try LibraryUserApp.run(environment: ["STALLWATCH_SYMBOLIZER": installed.marker("symbolizer")])
        #expect(run.status == 0)
        try #require(run.stalls.count == 2)
        #expect(run.stalls.map(\.capture.method) == ["ptrace", "ptrace"], "\(run.stalls.map(\.capture.note))")
        #expect(!installed.marked("symbolizer"), "the helper ran the caller's STALLWATCH_SYMBOLIZER")
    }
}

@Suite struct SetUserIDCollectorTests {
    @Test(.enabled(if: getuid() == 0, "needs root to install a set-user-ID-root program and become nobody"))
    func stallwatchInstalledSetUserIDRefusesToRun() throws {
        let manager = FileManager.default
        let directory = manager.temporaryDirectory.appendingPathComponent("stallwatch-setuid-\(UUID().uuidString)").path
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? manager.removeItem(atPath: directory) }
        chmod(directory, 0o755)
        let copy = directory + "/stallwatch"
        try manager.copyItem(atPath: Products.stallwatch, toPath: copy)
        #expect(chown(copy, 0, 0) == 0 && chmod(copy, 0o4755) == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", copy, "stack", "1"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 77, "\(text)")
        #expect(text.contains("set-user-ID"), "\(text)")
        #expect(text.split(separator: "\n").count == 1, "one line: \(text)")
    }
}
