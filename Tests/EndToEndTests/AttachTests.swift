// `stallwatch attach` against a demo that was already running: both watch modes, detaching, one collector at a time,
// a process that exits mid-capture.
import Foundation
import StallwatchTestSupport
import Testing

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct AttachTests {
    /// External mode: no agent in the demo; stalls are found from /proc and timed to within a sample.
    @Test(arguments: KernelSourceTests.sources)
    func externalModeReportsEachStallWithItsCulprit(source: String) throws {
        let demo = try RunningDemo(["--scenario", "sleep", "--stalls", "2", "--duration", "500ms"])
        let result = try runStallwatch(["attach", "--source", source, "--format", "json", String(demo.pid)])
        demo.waitForExit()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("from outside (external mode"))
        let truth = demo.groundTruth
        #expect(truth.count == 2, "demo: \(demo.stderrText)")
        let stalls = try result.stalls
        #expect(stalls.count == 2, "stdout: \(result.stdout)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.mode == (source == "kernel" ? "kernel" : "external"))
            #expect(stall.activity == "unknown")
            #expect(stall.resolutionMs == (source == "kernel" ? .null : .value(80)))
            #expect(stall.symbols.contains { $0.contains("DiskCache.waitForSlowDisk") })
            #expect(stall.capture.method == "ptrace")
            #expect(stall.thread.value?.blockedOn == "sleep")
            let duration = try #require(stall.durationMs.value)
            // Start and end are each known to half a sample; allow a sample more for a busy machine.
            #expect(
                abs(duration - actual.durationMs) <= 120, "reported \(duration) ms, demo measured \(actual.durationMs)")
            let start = stall.startMonotonicMs
            #expect(abs(start - Double(actual.startNanoseconds) / 1e6) <= 120)
        }
        // ptrace leaves the sleeps alone, as under run.
        for actual in truth { #expect(actual.durationMs < 530, "a 500 ms usleep lasted \(actual.durationMs) ms") }
        let summary = try #require(try result.summary)
        #expect(summary.ended == "exited")
        #expect(summary.mode == "external")
        #expect(summary.exitStatus == .null)
    }

    /// Agent mode: the demo was started with the agent listening; reports are exact, as under run.
    @Test func agentModeReportsExactlyAsRunDoes() throws {
        let demo = try RunningDemo(["--scenario", "cpu", "--stalls", "2", "--duration", "500ms"], listening: true)
        let result = try runStallwatch(["attach", "--format", "json", String(demo.pid)])
        demo.waitForExit()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("through its agent"))
        let truth = demo.groundTruth
        let stalls = try result.stalls
        #expect(truth.count == 2 && stalls.count == 2, "stdout: \(result.stdout)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.mode == "agent")
            #expect(stall.activity == "afterWaiting")
            #expect(stall.callout == "timer")
            #expect(stall.resolutionMs == .null)
            let culprit = stall.culprit?.symbol
            #expect(culprit?.contains("ChecksumEngine.crunchChecksums") == true)
            let duration = try #require(stall.durationMs.value)
            #expect(duration >= actual.durationMs - 5 && duration <= actual.durationMs + 30)
        }
        #expect(try result.summary?.watchedPids == [Int(demo.pid)])
        #expect(try result.summary?.ended == "exited")
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
        #expect(try first.summary?.ended == "duration")
        #expect(try first.summary?.watchedPids == [Int(demo.pid)], "the idle loop was woken and seen")
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
        #expect(try result.stalls.count == 1, "the first session saw the stall: \(result.stdout)")
        #expect(try result.summary?.ended == "duration")
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
        let stall = try #require(try result.stalls.first, "stdout: \(result.stdout)")
        #expect(stall.unfinished == true)
        #expect(stall.samples.count >= 10)
        #expect(try result.summary?.ended == "signal")
        #expect(try result.summary?.signal == .value(Int(SIGINT)))
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
        let stall = try #require(try result.stalls.first, "stdout: \(result.stdout)")
        #expect(stall.unfinished == true)
        #expect(try result.summary?.ended == "exited")
    }

    @Test func agentModeWithoutAnAgentIsAnError() throws {
        let demo = try RunningDemo(["--scenario", "baseline", "--stalls", "1", "--period", "10s"])
        let result = try runStallwatch(["attach", "--mode", "agent", "--duration", "1s", String(demo.pid)])
        #expect(result.status == 69)
        #expect(result.stderr.contains("was not started with STALLWATCH_LISTEN=1"), "stderr: \(result.stderr)")
    }

    /// A socket at the process's path that another process serves is not its agent: stallwatch says so and watches
    /// from outside, instead of claiming the agent and dropping every message as not the process's.
    @Test func aSocketServedByAnotherProcessIsNotTheAgent() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-e2e-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let impostorRuntime = directory.appendingPathComponent("impostor").path
        let targetRuntime = directory.appendingPathComponent("target").path
        for runtime in [impostorRuntime, targetRuntime] {
            try FileManager.default.createDirectory(
                atPath: runtime + "/stallwatch", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        let arguments = ["--scenario", "baseline", "--stalls", "1", "--period", "30s"]
        // A real listening agent, of another process: it answers as an agent would.
        let impostor = try RunningDemo(arguments, listening: true, environment: ["XDG_RUNTIME_DIR": impostorRuntime])
        let target = try RunningDemo(arguments, environment: ["XDG_RUNTIME_DIR": targetRuntime])
        let served = impostorRuntime + "/stallwatch/\(impostor.pid).sock"
        try #require(waitFor({ FileManager.default.fileExists(atPath: served) }, timeout: 10))
        try FileManager.default.moveItem(atPath: served, toPath: targetRuntime + "/stallwatch/\(target.pid).sock")

        let result = try runStallwatch(["attach", "--duration", "1s", String(target.pid)])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("through its agent"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("from outside"), "stderr: \(result.stderr)")
        #expect(
            result.stderr.contains("is served by pid \(impostor.pid) (stallwatch-demo), not by pid \(target.pid)"),
            "stderr: \(result.stderr)")
        let agentOnly = try runStallwatch(["attach", "--mode", "agent", "--duration", "1s", String(target.pid)])
        #expect(agentOnly.status == 69)
        #expect(agentOnly.stderr.contains("is served by pid \(impostor.pid)"), "stderr: \(agentOnly.stderr)")
    }

    /// `--duration` bounds the whole session, the wait for an agent that never answers included.
    @Test func aMuteAgentDoesNotStretchTheDuration() throws {
        // Listens at its own agent socket path and never accepts nor answers.
        let built = try compile(
            """
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <sys/socket.h>
            #include <sys/un.h>
            #include <unistd.h>
            int main(void) {
                struct sockaddr_un address = {.sun_family = AF_UNIX};
                snprintf(address.sun_path, sizeof address.sun_path, "%s/stallwatch/%d.sock",
                         getenv("XDG_RUNTIME_DIR"), (int)getpid());
                int listener = socket(AF_UNIX, SOCK_SEQPACKET, 0);
                if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4) != 0)
                    return 1;
                fputs("listening\\n", stderr);
                pause();
                return 0;
            }
            """, language: "c", output: "mute-agent")
        defer { try? FileManager.default.removeItem(at: built) }
        let runtime = built.appendingPathComponent("runtime").path
        try FileManager.default.createDirectory(
            atPath: runtime + "/stallwatch", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let mute = Process()
        mute.executableURL = built.appendingPathComponent("mute-agent")
        mute.environment = RunningProgram.environment(listening: false).merging([
            "XDG_RUNTIME_DIR": runtime, "STALLWATCH_LISTEN": "1",
        ]) { $1 }
        try mute.run()
        defer {
            kill(mute.processIdentifier, SIGKILL)
            mute.waitUntilExit()
        }
        let socket = runtime + "/stallwatch/\(mute.processIdentifier).sock"
        try #require(waitFor({ FileManager.default.fileExists(atPath: socket) }, timeout: 10))

        let started = Date()
        let result = try runStallwatch(["attach", "--duration", "2s", String(mute.processIdentifier)])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("did not answer within"), "stderr: \(result.stderr)")
        // The agent's 2 s answer timeout and then 2 s from outside made at least 4 s.
        #expect(elapsed < 3.5, "\(elapsed) s for --duration 2s")
    }

    /// Another tracer holding the stalled thread for a while costs the samples it holds, not the stall's nor the
    /// later stalls': the capture is retried, and the record says who held the thread.
    @Test func anotherTracerHoldingTheThreadIsWaitedOut() throws {
        // Rests 1.5 s in epoll_wait, then spins 3 s while a child of its own ptraces it for the first second.
        let built = try compile(
            """
            #define _GNU_SOURCE
            #include <stdio.h>
            #include <sys/epoll.h>
            #include <sys/prctl.h>
            #include <sys/ptrace.h>
            #include <sys/wait.h>
            #include <time.h>
            #include <unistd.h>
            static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
            __attribute__((noinline)) static void spin_while_traced(double end) { volatile unsigned long x = 0; while (now() < end) x++; }
            int main(void) {
                prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
                int epoll = epoll_create1(0);
                struct epoll_event event;
                fputs("ready\\n", stderr);
                epoll_wait(epoll, &event, 1, 1500);
                pid_t parent = getpid();
                pid_t holder = fork();
                if (holder == 0) {
                    if (ptrace(PTRACE_SEIZE, parent, 0, 0) != 0) _exit(1);
                    usleep(1000000);
                    _exit(0);
                }
                spin_while_traced(now() + 3);
                waitpid(holder, 0, 0);
                epoll_wait(epoll, &event, 1, 1000);
                return 0;
            }
            """, language: "c", output: "traced", extraArguments: ["-g", "-O1"])
        defer { try? FileManager.default.removeItem(at: built) }
        let program = try RunningProgram(built.appendingPathComponent("traced").path)
        let result = try runStallwatch(["attach", "--mode", "external", "--format", "json", String(program.pid)])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stall = try #require(try result.stalls.first, "stdout: \(result.stdout)")
        #expect(stall.capture.method == "ptrace", "\(stall.capture)")
        #expect(!stall.samples.isEmpty, "sampled once the other tracer let go")
        #expect(stall.symbols.contains { $0.contains("spin_while_traced") })
        let note = try #require(stall.capture.note, "the record says another tracer held the thread")
        #expect(note.contains("another tracer (pid "), "\(note)")
        #expect(note.contains("traced) held the thread; retried 4 times"), "\(note)")
    }
}
