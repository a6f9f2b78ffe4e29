// A workload is untrusted input to a collector that often runs as root: what it writes on the agent's socket must
// never make stallwatch act on another process.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct HostileWorkloadTests {
    /// A C workload that writes each of its arguments as one datagram on the agent's socket, then sleeps a second.
    static let forger = """
        #include <stdlib.h>
        #include <string.h>
        #include <sys/socket.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
            const char *fd = getenv("STALLWATCH_AGENT_FD");
            if (fd == NULL) return 2;
            for (int i = 1; i < argc; i++) send(atoi(fd), argv[i], strlen(argv[i]), MSG_NOSIGNAL);
            sleep(1);
            return 0;
        }
        """

    /// A forged stall naming an unrelated process (as root, stallwatch could ptrace anything) is the sender's own.
    @Test func forgedStallsNamingAnotherProcessNeverSampleIt() throws {
        let directory = try compile(Self.forger, language: "c", output: "forger")
        defer { try? FileManager.default.removeItem(at: directory) }
        let victim = try TargetProcess(["/bin/sleep", "30"])
        defer { victim.stop() }
        let now = monotonicNow()
        let onset = StallOnset(
            identifier: 1, phase: .afterWaiting, start: now - 300_000_000, detectedAt: now, sequence: 1)
        func message(_ message: AgentMessage) throws -> String {
            String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
        }
        let messages = [
            try message(.stallBegan(pid: victim.pid, tid: victim.pid, onset: onset)),
            try message(.busyPeriods(pid: victim.pid, buckets: [[3, UInt64.max], [9, UInt64.max]])),
            try message(.stallEnded(pid: victim.pid, identifier: 1, endedAt: UInt64.max)),
            "not json",
        ]
        let result = try runStallwatch(
            ["run", "--format", "json", "--", directory.appendingPathComponent("forger").path] + messages)
        #expect(result.status == 0, "\(result.stderr)")
        let stalls = try result.stalls
        #expect(!stalls.contains { $0.pid == Int(victim.pid) }, "the victim was sampled: \(result.stdout)")
        #expect(
            stalls.allSatisfy { $0.pid != Int(victim.pid) && $0.unfinished }, "the forged end (UInt64.max) is dropped")
        let summary = try #require(try result.summary)
        #expect(
            summary.warnings.contains { $0.contains("message") && $0.contains("dropped") },
            "the dropped messages are said: \(summary.warnings)")
        #expect(victim.state == "S", "the victim was left alone")
    }
}
