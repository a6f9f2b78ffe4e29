// `stallwatch stack` of a process in another mount namespace, and `stallwatch run` as a container's entrypoint.
import Foundation
import StallwatchTestSupport
import Testing

/// A process in a container sees other files at the same paths: its image paths must be read through its root.
@Suite(.serialized) struct ContainerTests {
    /// A C program, run from a directory that exists only in its own mount namespace (a tmpfs mounted there by
    /// `unshare -m`): at its path on this side there is nothing.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func stackOfAProcessInAnotherMountNamespaceIsNamed() throws {
        let built = try compile(
            spinningProgram("spin_in_container"), language: "c", output: "spinner", extraArguments: ["-g", "-O1"])
        let hidden = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-ns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: hidden, withIntermediateDirectories: true)
        let inside = hidden.appendingPathComponent("spinner").path
        let container = Process()
        container.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        container.arguments = [
            "--mount", "--propagation", "private", "/bin/sh", "-c",
            "mount -t tmpfs none '\(hidden.path)' && cp '\(built.path)/spinner' '\(inside)' && exec '\(inside)'",
        ]
        container.standardOutput = FileHandle.nullDevice
        try container.run()
        defer {
            kill(container.processIdentifier, SIGKILL)
            container.waitUntilExit()
        }
        // Wait for the exec: the process then runs the copy inside its namespace.
        var running = false
        for _ in 0..<100 where !running {
            usleep(20_000)
            let exe = try? FileManager.default.destinationOfSymbolicLink(
                atPath: "/proc/\(container.processIdentifier)/exe")
            running = exe == inside
        }
        try #require(running, "the program started inside its namespace")
        #expect(!FileManager.default.fileExists(atPath: inside), "the program's path is empty on this side")
        let result = try runStallwatch(["stack", String(container.processIdentifier)])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let frame = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("spin_in_container") }, "stack: \(result.stdout)")
        #expect(frame.contains("at program.c:"), "line from the program's own debug info: \(frame)")
        // Unwound from the unwind tables in its memory, since libunwind cannot open the file either.
        #expect(result.stdout.contains(" main ") && result.stdout.contains("_start"), "stack: \(result.stdout)")
    }

    /// As the init of a pid namespace (a container's entrypoint), stallwatch inherits every orphan in it: it reaps
    /// them, and still reports the workload's own exit status.
    @Test(
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/ps")))
    func asPidOneItReapsOrphans() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-ns-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let states = directory.appendingPathComponent("states").path
        // The subshell exits at once: its `sleep 0.1` is an orphan, given to the namespace's pid 1.
        let script = "(sleep 0.1 &); sleep 1; ps -eo pid=,stat=,comm= > '\(states)'; exit 7"
        let container = Process()
        container.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        container.arguments = [
            "--pid", "--fork", "--mount-proc", Products.stallwatch, "run", "--format", "json", "--", "/bin/sh", "-c",
            script,
        ]
        let output = Pipe()
        container.standardOutput = output
        container.standardError = FileHandle.nullDevice
        try container.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        container.waitUntilExit()
        #expect(container.terminationStatus == 7, "the workload's own status")
        let summary = try #require(try JSONLines.records(in: text).compactMap(\.summary).last, "\(text)")
        #expect(summary.exitStatus == .value(7))
        let listed = try String(contentsOfFile: states, encoding: .utf8)
        #expect(listed.contains("stallwatch"), "stallwatch is pid 1 there: \(listed)")
        let zombies = listed.split(separator: "\n").filter {
            $0.split(separator: " ").dropFirst().first?.hasPrefix("Z") == true
        }
        #expect(zombies.isEmpty, "no zombie left: \(listed)")
    }
}
