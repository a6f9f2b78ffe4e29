// Every way attaching can fail, for `stallwatch attach` and `stallwatch stack` alike: no such process, a zombie, a
// thread id, another user's process or agent.
import Foundation
import Testing

@Suite(.serialized) struct AttachErrorTests {
    /// A pid that was just used and is free again.
    func vanishedPid() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test(arguments: ["stack", "attach"])
    func noSuchProcess(command: String) throws {
        let pid = try vanishedPid()
        let result = try runStallwatch([command, String(pid)])
        #expect(result.status == 66)
        #expect(
            result.stderr
                == "stallwatch: error: no process with pid \(pid) (it may have exited); find the pid with 'pgrep NAME' or 'ps -e'\n"
        )
    }

    @Test func aZombieHasExited() throws {
        // The shell's background child exits at once, and the sleep the shell becomes never reaps it.
        let parent = Process()
        parent.executableURL = URL(fileURLWithPath: "/bin/sh")
        parent.arguments = ["-c", "true & echo $!; exec sleep 10"]
        let pipe = Pipe()
        parent.standardOutput = pipe
        try parent.run()
        defer { parent.terminate() }
        let line = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
        let zombie = try #require(Int32(line.trimmingCharacters(in: .whitespacesAndNewlines)))
        try #require(
            waitFor(
                { ((try? String(contentsOfFile: "/proc/\(zombie)/stat", encoding: .utf8)) ?? "").contains(") Z ") },
                timeout: 5))
        let result = try runStallwatch(["stack", String(zombie)])
        #expect(result.status == 66)
        #expect(result.stderr.contains("has exited: it is a zombie waiting for its parent"), "stderr: \(result.stderr)")
    }

    @Test func aThreadIdPointsAtItsProcess() throws {
        let demo = try RunningDemo(["--scenario", "mutex", "--stalls", "1", "--period", "10s"])
        // The demo starts its other threads soon after it starts, not necessarily before this looks.
        var other: String?
        _ = waitFor(
            {
                let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(demo.pid)/task")) ?? []
                other = tids.first { $0 != String(demo.pid) }
                return other != nil
            }, timeout: 10)
        let thread = try #require(other, "the demo has a second thread")
        let result = try runStallwatch(["stack", thread])
        #expect(result.status == 66)
        #expect(result.stderr.contains("is a thread of process \(demo.pid)"))
    }

    /// Dropped to nobody, stallwatch may not trace a root-owned process: it says why and what to do, not errno.
    @Test(arguments: [
        ["stack"], ["attach", "--duration", "1s"], ["attach", "--mode", "external", "--duration", "1s"],
    ])
    func anotherUsersProcessWhenUnprivileged(command: [String]) throws {
        let demo = try RunningDemo(["--scenario", "baseline", "--stalls", "1", "--period", "10s"], listening: true)
        let result = try runStallwatch(command + [String(demo.pid)], asUser: "nobody")
        #expect(result.status == 77, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("belongs to user root (uid 0), and stallwatch runs as nobody"))
        #expect(result.stderr.contains("sudo"))
        #expect(!result.stderr.contains("errno"))
        #expect(demo.process.isRunning)
    }

    /// The agent's socket is out of another user's reach.
    @Test func anotherUsersAgentIsOutOfReach() throws {
        let demo = try RunningDemo(["--scenario", "baseline", "--stalls", "1", "--period", "10s"], listening: true)
        let result = try runStallwatch(
            ["attach", "--mode", "agent", "--duration", "1s", String(demo.pid)], asUser: "nobody")
        #expect(result.status == 69, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("cannot watch pid \(demo.pid) through its agent"))
    }

}
