// `stallwatch stack` of a program replaced on disk while it runs.
import Foundation
import Testing

/// A program replaced on disk while it runs (a deploy): its frames still come from the file it runs.
@Suite(.serialized) struct ReplacedProgramTests {
    @Test func stackOfAProgramReplacedOnDiskIsCompleteAndNamed() throws {
        let directory = try compile(
            spinningProgram("spin_before_upgrade"), language: "c", output: "daemon", extraArguments: ["-g", "-O1"])
        let program = directory.appendingPathComponent("daemon").path
        let running = Process()
        running.executableURL = URL(fileURLWithPath: program)
        running.standardOutput = FileHandle.nullDevice
        try running.run()
        defer {
            // SIGKILL: a child spawned from a test's worker thread inherits its blocked signals, SIGTERM among them.
            kill(running.processIdentifier, SIGKILL)
            running.waitUntilExit()
        }
        usleep(200_000)
        // The upgrade: a new build, its functions elsewhere, renamed over the old path as package managers and deploy
        // scripts do. Named from that file, the running code would get the new build's names, or none.
        let newBuild = try compile(
            "static int padding[4096];\n" + spinningProgram("spin_after_upgrade"),
            language: "c", output: "daemon", extraArguments: ["-g", "-O0"])
        let upgrade = directory.appendingPathComponent("daemon.new").path
        try FileManager.default.copyItem(atPath: newBuild.appendingPathComponent("daemon").path, toPath: upgrade)
        #expect(rename(upgrade, program) == 0)
        let result = try runStallwatch(["stack", String(running.processIdentifier)])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("was replaced or deleted after pid \(running.processIdentifier) started"))
        let frame = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("spin_before_upgrade") }, "stack: \(result.stdout)"
        )
        #expect(frame.contains("at program.c:"), "named from the running copy: \(frame)")
        #expect(!result.stdout.contains("spin_after_upgrade"), "stack: \(result.stdout)")
        #expect(result.stdout.contains(" main ") && result.stdout.contains("_start"), "complete: \(result.stdout)")
    }
}
