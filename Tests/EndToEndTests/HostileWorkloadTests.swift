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

    /// A program whose DWARF abbreviations are noise: the toolchain's Runtime module trapped on it inside
    /// `stallwatch stack`, whichever symbolizer was chosen. Names must degrade (to the symbol table's), never the
    /// collector.
    @Test(arguments: ["", "llvm-symbolizer", "runtime"])
    func damagedDebugInfoNeverKillsStack(symbolizer: String) throws {
        let spinner = """
            __attribute__((noinline)) void hostile_dwarf_spin(void) { for (volatile long i = 0;; i++) {} }
            int main(void) { hostile_dwarf_spin(); }
            """
        let directory = try compile(spinner, language: "c", output: "spinner", extraArguments: ["-g", "-O1"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = directory.appendingPathComponent("spinner").path
        // Deterministic noise, the size of a small abbreviation table.
        var seed: UInt64 = 0x5eed
        let noise = (0..<4096).map { _ -> UInt8 in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: seed >> 56)
        }
        let noisePath = directory.appendingPathComponent("noise").path
        try Data(noise).write(to: URL(fileURLWithPath: noisePath))
        let objcopy = Process()
        objcopy.executableURL = URL(fileURLWithPath: "/usr/bin/objcopy")
        objcopy.arguments = ["--update-section", ".debug_abbrev=\(noisePath)", binary]
        try objcopy.run()
        objcopy.waitUntilExit()
        try #require(objcopy.terminationStatus == 0, "objcopy (binutils) rewrites the section")
        let target = try TargetProcess([binary])
        defer { target.stop() }
        #expect(target.awaitExec(of: binary))
        usleep(50_000)
        var environment = ProcessInfo.processInfo.environment
        if symbolizer == "runtime" {
            environment["STALLWATCH_SYMBOLIZER"] = "runtime"
        } else if !symbolizer.isEmpty {
            // The first llvm-symbolizer on PATH (the toolchain ships one beside swift).
            let found = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/llvm-symbolizer" }
                .first { FileManager.default.isExecutableFile(atPath: $0) }
            environment["STALLWATCH_SYMBOLIZER"] = try #require(found, "the Swift toolchain has llvm-symbolizer")
        }
        let result = try runStallwatch(["stack", String(target.pid)], environment: environment)
        #expect(result.status == 0, "stack died on damaged DWARF: \(result.status) \(result.stderr)")
        #expect(result.stdout.contains("hostile_dwarf_spin"), "named from the symbol table: \(result.stdout)")
        #expect(target.state == "R" || target.state == "S", "the target runs on")
    }
}
