// `stallwatch stack` of a process in another mount namespace, as in a container.
import Foundation
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
}
