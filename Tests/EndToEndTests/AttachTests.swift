// `stallwatch attach` and `stallwatch stack` against a demo that was already running: both watch modes, detaching,
// one-shot stacks (one sitting in the vDSO), and every way attaching can fail.
import Foundation
import Testing

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct AttachTests {
    /// External mode: no agent in the demo; stalls are found from /proc and timed to within a sample.
    @Test func externalModeReportsEachStallWithItsCulprit() throws {
        let demo = try RunningDemo(["--scenario", "sleep", "--stalls", "2", "--duration", "500ms"])
        let result = try runStallwatch(["attach", "--format", "json", String(demo.pid)])
        demo.waitForExit()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("from outside (external mode"))
        let truth = demo.groundTruth
        #expect(truth.count == 2, "demo: \(demo.stderrText)")
        #expect(result.stalls.count == 2, "stdout: \(result.stdout)")
        for (stall, actual) in zip(result.stalls, truth) {
            #expect(stall["mode"] as? String == "external")
            #expect(stall["activity"] as? String == "unknown")
            #expect(stall["resolutionMs"] as? Double == 80)
            #expect(symbols(in: stall).contains { $0.contains("DiskCache.waitForSlowDisk") })
            #expect((stall["capture"] as? [String: Any])?["method"] as? String == "ptrace")
            #expect((stall["thread"] as? [String: Any])?["blockedOn"] as? String == "sleep")
            let duration = try #require(stall["durationMs"] as? Double)
            // Start and end are each known to half a sample; allow a sample more for a busy machine.
            #expect(
                abs(duration - actual.durationMs) <= 120, "reported \(duration) ms, demo measured \(actual.durationMs)")
            let start = try #require(stall["startMonotonicMs"] as? Double)
            #expect(abs(start - Double(actual.startNanoseconds) / 1e6) <= 120)
        }
        // ptrace leaves the sleeps alone, as under run.
        for actual in truth { #expect(actual.durationMs < 530, "a 500 ms usleep lasted \(actual.durationMs) ms") }
        let summary = try #require(result.summary)
        #expect(summary["ended"] as? String == "exited")
        #expect(summary["mode"] as? String == "external")
        #expect(summary["exitStatus"] is NSNull)
    }

    /// Agent mode: the demo was started with the agent listening; reports are exact, as under run.
    @Test func agentModeReportsExactlyAsRunDoes() throws {
        let demo = try RunningDemo(["--scenario", "cpu", "--stalls", "2", "--duration", "500ms"], listening: true)
        let result = try runStallwatch(["attach", "--format", "json", String(demo.pid)])
        demo.waitForExit()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("through its agent"))
        let truth = demo.groundTruth
        #expect(truth.count == 2 && result.stalls.count == 2, "stdout: \(result.stdout)")
        for (stall, actual) in zip(result.stalls, truth) {
            #expect(stall["mode"] as? String == "agent")
            #expect(stall["activity"] as? String == "afterWaiting")
            #expect(stall["callout"] as? String == "timer")
            #expect(stall["resolutionMs"] is NSNull)
            let culprit = (stall["culprit"] as? [String: Any])?["symbol"] as? String
            #expect(culprit?.contains("ChecksumEngine.crunchChecksums") == true)
            let duration = try #require(stall["durationMs"] as? Double)
            #expect(duration >= actual.durationMs - 5 && duration <= actual.durationMs + 30)
        }
        #expect(result.summary?["watchedPids"] as? [Int] == [Int(demo.pid)])
        #expect(result.summary?["ended"] as? String == "exited")
    }

    /// `--duration` detaches and the agent accepts the next collector; meanwhile the socket is private.
    @Test func agentSessionsEndAndTheAgentAcceptsTheNext() throws {
        let demo = try RunningDemo(
            ["--scenario", "cpu", "--stalls", "1", "--duration", "600ms", "--period", "20s"], listening: true)
        let directory =
            ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].map { $0 + "/stallwatch" }
            ?? "/tmp/stallwatch-\(getuid())"
        let socket = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(demo.pid).sock")
        #expect((socket[.posixPermissions] as? Int) == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: directory)
        #expect((folder[.posixPermissions] as? Int) == 0o700)

        let started = Date()
        let first = try runStallwatch(["attach", "--duration", "1s", "--format", "json", String(demo.pid)])
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(Date().timeIntervalSince(started) < 6)
        #expect(first.summary?["ended"] as? String == "duration")
        #expect(first.summary?["watchedPids"] as? [Int] == [Int(demo.pid)], "the idle loop was woken and seen")
        #expect(demo.process.isRunning)
        let second = try runStallwatch(["attach", "--duration", "1s", "--mode", "agent", String(demo.pid)])
        #expect(second.status == 0, "the agent serves one collector after another: \(second.stderr)")
        #expect(second.stdout.contains("(--duration); it keeps running"))
    }

    /// One collector at a time: a second one is told who is attached, and the first goes on undisturbed.
    @Test func aSecondCollectorIsRefusedWhileOneIsAttached() throws {
        let demo = try RunningDemo(
            ["--scenario", "cpu", "--stalls", "1", "--duration", "600ms", "--period", "20s"], listening: true)
        let first = try RunningStallwatch(["attach", "--duration", "3s", "--format", "json", String(demo.pid)])
        try #require(waitFor({ demo.stderrText.contains("stall scenario=cpu") }, timeout: 5))
        let second = try runStallwatch(["attach", "--mode", "agent", "--duration", "1s", String(demo.pid)])
        #expect(second.status == 69)
        #expect(
            second.stderr.contains("another stallwatch (pid \(first.process.processIdentifier)) is attached"),
            "stderr: \(second.stderr)")
        let result = try #require(first.result(timeout: 10))
        #expect(result.status == 0)
        #expect(result.stalls.count == 1, "the first session saw the stall: \(result.stdout)")
        #expect(result.summary?["ended"] as? String == "duration")
    }

    /// Ctrl-C detaches at once, prints the summary, and leaves the process running, not stopped.
    @Test(arguments: ["external", "agent"])
    func interruptDetachesAndLeavesTheProcessRunning(mode: String) throws {
        let demo = try RunningDemo(
            ["--scenario", "cpu", "--stalls", "1", "--duration", "20s", "--period", "21s"], listening: mode == "agent")
        let watcher = try RunningStallwatch([
            "attach", "--mode", mode, "--format", "json", "--threshold", "20ms", "--max-samples", "1000",
            String(demo.pid),
        ])
        // Until the stall is declared and being sampled (one capture every 20 ms).
        usleep(1_500_000)
        kill(watcher.process.processIdentifier, SIGINT)
        let result = try #require(watcher.result(timeout: 10), "stallwatch did not stop on SIGINT")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stall = try #require(result.stalls.first, "stdout: \(result.stdout)")
        #expect(stall["unfinished"] as? Bool == true)
        #expect((stall["samples"] as? [Any])?.count ?? 0 >= 10)
        #expect(result.summary?["ended"] as? String == "signal")
        #expect(result.summary?["signal"] as? Int == Int(SIGINT))
        // Never left in a ptrace stop: it keeps getting the CPU.
        #expect(demo.process.isRunning)
        let cpu = demo.mainThreadCPU
        usleep(500_000)
        #expect(demo.mainThreadCPU > cpu + 50_000_000, "the stalled main thread still runs")
        #expect(demo.mainThreadState != "t" && demo.mainThreadState != "T")
    }

    /// A process that exits while stallwatch captures its stalled thread ends the session cleanly.
    @Test func processKilledMidCaptureEndsTheSession() throws {
        let demo = try RunningDemo(["--scenario", "cpu", "--stalls", "1", "--duration", "20s", "--period", "21s"])
        let watcher = try RunningStallwatch([
            "attach", "--format", "json", "--threshold", "10ms", "--max-samples", "1000", String(demo.pid),
        ])
        usleep(1_000_000)
        demo.kill()
        let result = try #require(watcher.result(timeout: 10), "stallwatch did not notice the exit")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stall = try #require(result.stalls.first, "stdout: \(result.stdout)")
        #expect(stall["unfinished"] as? Bool == true)
        #expect(result.summary?["ended"] as? String == "exited")
    }

    @Test func agentModeWithoutAnAgentIsAnError() throws {
        let demo = try RunningDemo(["--scenario", "baseline", "--stalls", "1", "--period", "10s"])
        let result = try runStallwatch(["attach", "--mode", "agent", "--duration", "1s", String(demo.pid)])
        #expect(result.status == 69)
        #expect(result.stderr.contains("was not started with STALLWATCH_LISTEN=1"), "stderr: \(result.stderr)")
    }
}

@Suite(.serialized) struct StackTests {
    /// Starts a demo and waits until its main thread is inside the stall.
    func stalledDemo(_ scenario: String) throws -> RunningDemo {
        let demo = try RunningDemo(["--scenario", scenario, "--stalls", "1", "--duration", "30s", "--period", "31s"])
        // The stall starts 300 ms after the banner.
        usleep(800_000)
        return demo
    }

    @Test(arguments: [
        (
            "cpu",
            ["ChecksumEngine.crunchChecksums", "ReportRenderer.layoutAllPages", "ReportRenderer.renderMonthlyReport"]
        ),
        ("vdso", ["FrameClock.spinUntilNextFrame", "AnimationDriver.renderFrame"]),
    ])
    func mainThreadStackNamesTheFunctionAndLine(scenario: String, callers: [String]) throws {
        let function = callers[0]
        let file = "Culprits.swift"
        let demo = try stalledDemo(scenario)
        // The vdso demo spends most, not all, of its time inside the vDSO: a snapshot may land in the loop
        // around the call. Every snapshot must be complete and correctly named; at least one of a few must
        // show the thread inside the vDSO with its symbol.
        let attempts = scenario == "vdso" ? 8 : 1
        var sawTheVDSO = false
        for _ in 0..<attempts where !sawTheVDSO {
            let result = try runStallwatch(["stack", String(demo.pid)])
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("stallwatch: pid \(demo.pid) (stallwatch-demo)") == true)
            #expect(lines.contains("thread \(demo.pid) \"stallwatch-demo\" (main): running"))
            let culprit = try #require(lines.first { $0.contains(function) }, "stack: \(result.stdout)")
            #expect(culprit.contains("at \(file)"))
            #expect(lines.contains { $0.contains("_start") }, "complete down to the entry point")
            // Each frame under its own caller, in order: names belong to the right addresses.
            let index = try #require(lines.firstIndex(of: culprit))
            let next = lines[index..<min(lines.count, index + callers.count)]
            #expect(zip(next, callers).allSatisfy { $0.contains($1) }, "stack: \(result.stdout)")
            sawTheVDSO = lines.contains { $0.contains("[vdso]") && $0.contains("clock_gettime") }
        }
        if scenario == "vdso" {
            #expect(sawTheVDSO, "no snapshot of \(attempts) showed the thread inside the vDSO")
        }
        #expect(demo.process.isRunning)
    }

    @Test func allThreadsAsJSON() throws {
        let demo = try stalledDemo("mutex")
        let result = try runStallwatch(["stack", "--all-threads", "--format", "json", String(demo.pid)])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let record = try #require(result.records.first)
        #expect(record["event"] as? String == "stack")
        let threads = try #require(record["threads"] as? [[String: Any]])
        #expect(threads.count >= 2 && threads.count == record["threadCount"] as? Int)
        let main = try #require(threads.first)
        #expect(main["main"] as? Bool == true && main["tid"] as? Int == Int(demo.pid))
        let mainSymbols = (main["frames"] as? [[String: Any]] ?? []).compactMap { $0["symbol"] as? String }
        #expect(mainSymbols.contains { $0.contains("AccountStore.waitForAccountLock") })
        #expect((main["threadState"] as? [String: Any])?["syscall"] as? String == "futex")
        // The thread holding the lock, with the name the kernel knows it by.
        let sync = try #require(
            threads.first { thread in
                (thread["frames"] as? [[String: Any]] ?? []).contains {
                    ($0["symbol"] as? String)?.contains("syncInBackground") == true
                }
            }, "threads: \(threads)")
        let tid = try #require(sync["tid"] as? Int)
        let comm = try String(contentsOfFile: "/proc/\(demo.pid)/task/\(tid)/comm", encoding: .utf8)
        #expect(sync["name"] as? String == comm.trimmingCharacters(in: .newlines))
        #expect((sync["threadState"] as? [String: Any])?["syscall"] as? String == "clock_nanosleep")
        // Each thread is stopped for well under a millisecond when warm; generous for a loaded two-core machine.
        for thread in threads {
            #expect((thread["stoppedMs"] as? Double ?? 1000) < 50, "\(thread["name"] ?? "?") stopped too long")
        }
    }
}

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

/// A C program whose main thread spins in `function` for ever.
func spinningProgram(_ function: String) -> String {
    """
    #include <stdio.h>
    __attribute__((noinline)) static unsigned long \(function)(unsigned long state) {
        while (state != 42) { state = state * 6364136223846793005UL + 1442695040888963407UL; }
        return state;
    }
    int main(int argc, char **argv) { printf("%lu\\n", \(function)((unsigned long)argc)); return 0; }
    """
}

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
            let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(container.processIdentifier)/exe")
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
            result.stdout.split(separator: "\n").first { $0.contains("spin_before_upgrade") }, "stack: \(result.stdout)")
        #expect(frame.contains("at program.c:"), "named from the running copy: \(frame)")
        #expect(!result.stdout.contains("spin_after_upgrade"), "stack: \(result.stdout)")
        #expect(result.stdout.contains(" main ") && result.stdout.contains("_start"), "complete: \(result.stdout)")
    }
}
