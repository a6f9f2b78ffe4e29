// `--thread`: event loops on threads other than the main one, watched from /proc under run and attach; the main thread
// that never was a loop is not reported; selectors that match nothing or cannot match.
import Foundation
import StallwatchTestSupport
import Testing

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct EventLoopThreadTests {
    static let pool = ["--scenario", "event-loops", "--stalls", "2", "--duration", "500ms"]

    /// Each stall found on the thread the demo says, with its handler and its length, and none on the main thread.
    func expectPoolStalls(_ stalls: [StallRecord], truth: [DemoStall], resultText: String, source: String) {
        #expect(truth.count == 2, "the demo's own stalls: \(resultText)")
        #expect(stalls.count == 2, "one report per stall, none for the main thread: \(resultText)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.tid == actual.tid, "the stalled loop's tid")
            #expect(stall.threadName == actual.threadName)
            #expect(stall.tid != stall.pid)
            #expect(
                stall.culprit?.symbol?.contains(actual.culprit) == true, "culprit \(stall.culprit?.symbol ?? "none")")
            #expect(stall.mode == (source == "kernel" ? "kernel" : "external"))
            let duration = stall.durationMs.value ?? 0
            // From /proc, start and end are each within half a sample (a sample more for a busy machine); the kernel's
            // are exact.
            let tolerance = source == "kernel" ? actual.durationMs * 0.02 + 2 : 120
            #expect(
                abs(duration - actual.durationMs) <= tolerance, "reported \(duration), measured \(actual.durationMs)")
        }
        if stalls.count == 2 {
            #expect(stalls[0].thread.value?.blockedOn == "sleep")
            #expect(stalls[1].thread.value?.verdict == "cpuBound")
            #expect(stalls[0].fingerprint != stalls[1].fingerprint)
        }
    }

    /// Under run, the loop threads start after the agent loaded: picked up as they appear.
    @Test(arguments: KernelSourceTests.sources)
    func runWatchesLoopThreadsByName(source: String) throws {
        let result = try runStallwatch(
            ["run", "--thread", "NIO-ELT-*", "--source", source, "--format", "json", "--", Products.demo] + Self.pool)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        expectPoolStalls(
            try result.stalls, truth: result.groundTruth, resultText: result.stdout + result.stderr, source: source)
        let summary = try #require(try result.summary)
        let threads = try #require(summary.threads)
        #expect(Set(threads.map(\.threadName)) == ["NIO-ELT-0-#1", "NIO-ELT-0-#2"])
        #expect(threads.allSatisfy { $0.stalls == 1 && $0.totalMs > 300 })
        #expect(!result.stderr.contains("matches no thread"))
    }

    @Test(arguments: KernelSourceTests.sources)
    func attachWatchesEveryLoopAndNotTheParkedMainThread(source: String) throws {
        let demo = try RunningDemo(Self.pool)
        let result = try runStallwatch(
            ["attach", "--thread", "all", "--source", source, "--format", "json", String(demo.pid)])
        demo.waitForExit()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        expectPoolStalls(
            try result.stalls, truth: demo.groundTruth, resultText: result.stdout + demo.stderrText, source: source)
        let summary = try #require(try result.summary)
        // The main thread waited in pthread_join (a futex) the whole time: named as not watched, and why.
        #expect(
            summary.warnings.contains {
                $0.contains("(tid \(demo.pid))") && $0.contains("not watched") && $0.contains("futex")
            }, "\(summary.warnings)")
        #expect(!summary.warnings.contains { $0.contains("NIO-ELT") }, "the loops were watched")
    }

    /// The false positive this fixes: `attach` to a server whose main thread only waits reported one endless stall.
    /// Since stallwatch looks for a process's event loops itself when its main thread runs none, the same attach finds
    /// the pool's loops and their stalls, and says so in one line.
    @Test(arguments: KernelSourceTests.sources)
    func aMainThreadThatNeverRunsALoopIsNoStall(source: String) throws {
        let demo = try RunningDemo(Self.pool)
        let result = try runStallwatch(["attach", "--source", source, "--format", "json", String(demo.pid)])
        demo.waitForExit()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(demo.groundTruth.count == 2)
        #expect(try result.stalls.allSatisfy { $0.tid != $0.pid }, "stdout: \(result.stdout)")
        #expect(result.stderr.contains("not watched: never seen waiting in an event-loop wait"))
        expectPoolStalls(
            try result.stalls, truth: demo.groundTruth, resultText: result.stdout + demo.stderrText, source: source)
        let found = result.stderr.split(separator: "\n").filter { $0.contains("event-loop thread") }
        #expect(found.count == 1 && found[0].contains("NIO-ELT-0-#"), "\(result.stderr)")
    }

    /// `run --thread all` on a program whose main thread runs an epoll loop of its own (C, asyncio): the agent watches
    /// nothing in it and says so, and the main thread is watched from outside like any other thread (it was dropped
    /// silently: 3 stalls, 0 reported).
    @Test(arguments: KernelSourceTests.sources)
    func runWatchesAMainThreadThatRunsItsOwnLoop(source: String) throws {
        let program = """
            #include <stdio.h>
            #include <sys/epoll.h>
            #include <time.h>
            static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
            __attribute__((noinline)) static void main_handler(double end) { volatile unsigned long x = 0; while (now() < end) x++; }
            int main(void) {
                int epoll = epoll_create1(0);
                struct epoll_event event;
                for (int i = 0; i < 3; i++) {
                    epoll_wait(epoll, &event, 1, 300);
                    double woke = now();
                    main_handler(woke + 0.4);
                    fprintf(stderr, "busy_ms=%.3f\\n", (now() - woke) * 1e3);
                }
                epoll_wait(epoll, &event, 1, 200);
                return 0;
            }
            """
        let built = try compile(program, language: "c", output: "main-loop", extraArguments: ["-g", "-O1"])
        let result = try runStallwatch([
            "run", "--thread", "all", "--source", source, "--format", "json", "--",
            built.appendingPathComponent("main-loop").path,
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 3, "\(result.stdout)\n\(result.stderr)")
        // The handler's own measure, from just after its wait returned to just before the next: a loaded machine
        // can keep it from a CPU for a while past its 400 ms, and the busy period then lasts that much longer.
        let measured = result.stderr.split(separator: "\n").compactMap { line in
            line.hasPrefix("busy_ms=") ? Double(line.dropFirst(8)) : nil
        }
        #expect(measured.count == 3, "\(result.stderr)")
        for (stall, truth) in zip(stalls, measured) {
            #expect(stall.tid == stall.pid, "the main thread's loop")
            #expect(stall.symbols.contains("main_handler"), "\(stall.symbols.prefix(5))")
            let duration = try #require(stall.durationMs.value)
            // The kernel's busy period holds the handler's and the instants around it (the wait's return to user
            // space, the next call's entry): never shorter, and longer by a sliver unless the thread lost its CPU
            // there.
            let (below, above) = source == "kernel" ? (0.5, truth * 0.02 + 2) : (120, 120)
            #expect(duration >= truth - below, "\(duration) ms, the handler measured \(truth)")
            #expect(duration - truth <= above, "\(duration) ms, the handler measured \(truth)")
        }
    }

    /// - Parameter afterward: what the main thread does once the loop thread exited; returning at once, the process
    ///   is gone before the thread's next sample, and the stall still ended at the thread's exit, not unfinished.
    @Test(arguments: ["sleep(1);", ""])
    func aThreadThatExitsMidStallEndsItsStall(afterward: String) throws {
        // A loop thread rests in epoll_wait for 400 ms, then burns CPU for 700 ms and exits in the middle of it.
        let source = """
            #define _GNU_SOURCE
            #include <pthread.h>
            #include <sys/epoll.h>
            #include <time.h>
            #include <unistd.h>
            static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
            __attribute__((noinline)) static void burn_until_exit(double end) { volatile unsigned long x = 0; while (now() < end) x++; }
            static void *loop(void *unused) {
                pthread_setname_np(pthread_self(), "short-loop");
                int epoll = epoll_create1(0);
                struct epoll_event event;
                epoll_wait(epoll, &event, 1, 400);
                burn_until_exit(now() + 0.7);
                return 0;
            }
            int main(void) {
                pthread_t thread; pthread_create(&thread, 0, loop, 0); pthread_join(thread, 0);
                \(afterward)
                return 0;
            }
            """
        let built = try compile(source, language: "c", output: "short-loop", extraArguments: ["-g", "-O1", "-pthread"])
        let result = try runStallwatch([
            "run", "--thread", "short-*", "--format", "json", "--", built.appendingPathComponent("short-loop").path,
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 1, "stdout: \(result.stdout)")
        let stall = try #require(stalls.first)
        #expect(stall.threadName == "short-loop")
        #expect(stall.symbols.contains { $0.contains("burn_until_exit") })
        let duration = try #require(stall.durationMs.value, "ended at the thread's exit, not unfinished")
        // Seen from /proc: how soon the exit is noticed is the sampler's timing (192 ms off under AddressSanitizer).
        #expect(
            !Sanitizer.timingIsMeasurable || abs(duration - 700) <= 160, "reported \(duration) ms for a 700 ms burn")
    }

    /// A resident thread with its own RunLoop: watched through the agent's observers, exactly, as the main loop is.
    @Test func aResidentRunLoopThreadIsWatchedByTheAgent() throws {
        let arguments = ["--scenario", "loop-thread", "--stalls", "2", "--duration", "500ms"]
        // The demo command watches the scenario's thread by itself (`--thread heartbeat`).
        let result = try runStallwatch(
            ["demo", "--scenario", "loop-thread", "--format", "json", "--"] + arguments.dropFirst(2))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        let stalls = try result.stalls
        #expect(truth.count == 2 && stalls.count == 2, "no main-thread stall: \(result.stdout)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.tid == actual.tid)
            #expect(stall.threadName == "heartbeat")
            #expect(stall.mode == nil, "the agent's exact transitions, not /proc")
            #expect(stall.activity == "afterWaiting")
            #expect(stall.callout == "timer")
            #expect(stall.culprit?.symbol?.contains("TelemetryUploader.compressBatch") == true)
            let duration = try #require(stall.durationMs.value)
            #expect(duration >= actual.durationMs - 5 && duration <= actual.durationMs + 30)
        }
        // The same program watched as before --thread: its main loop never stalls, so nothing is reported.
        let mainOnly = try runStallwatch(["run", "--format", "json", "--", Products.demo] + arguments)
        #expect(mainOnly.status == 0)
        #expect(mainOnly.groundTruth.count == 2)
        #expect(try mainOnly.stalls.isEmpty, "stdout: \(mainOnly.stdout)")
    }

    /// A thread named `pumped` runs its run loop in short calls of its own (so its loop is run again every 50 ms), and
    /// a timer on it blocks 400 ms every second.
    static let pumpedLoop = """
        import Foundation

        @inline(never) func slowTick() { usleep(400_000) }
        let thread = Thread {
            // The kernel's name, written by the thread itself: Foundation's `Thread.current.name` reached the kernel in
            // only 55 of 60 starts (a race in its setter, with or without the agent).
            try? "pumped".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            Timer.scheduledTimer(withTimeInterval: 1, repeats: true) { _ in slowTick() }
            while true { _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05)) }
        }
        thread.start()
        while true { sleep(60) }
        """

    /// `attach --thread` through a listening agent watches a loop thread with the agent's observers (exact, mode
    /// `agent`), and so does a second session after the first detached: each watch offers the thread anew.
    @Test func attachThroughTheAgentWatchesALoopThreadInEverySession() throws {
        let program = try RunningProgram(try compileSwift(Self.pumpedLoop, name: "pumped-loop"), listening: true)
        // Attached before the thread is there, `--thread pumped` matched nothing (once on a loaded CI machine).
        try #require(program.waitForThread(named: "pumped"), "the program never started its loop thread")
        for session in 1...2 {
            let result = try runStallwatch([
                "attach", "--mode", "agent", "--thread", "pumped", "--duration", "2500ms", "--format", "json",
                String(program.pid),
            ])
            #expect(result.status == 0, "session \(session): \(result.stderr)")
            let stalls = try result.stalls.filter { !$0.unfinished }
            #expect(!stalls.isEmpty, "session \(session): \(result.stdout)\n\(result.stderr)")
            for stall in stalls {
                #expect(stall.threadName == "pumped", "session \(session)")
                #expect(stall.activity == "afterWaiting", "session \(session): the agent's observers, not /proc")
                #expect(stall.culprit?.symbol == "slowTick()", "session \(session)")
            }
        }
    }

    /// A loop thread that starts while stallwatch is already attached is picked up.
    @Test func aThreadCreatedAfterTheStartIsPickedUp() throws {
        let source = """
            #define _GNU_SOURCE
            #include <pthread.h>
            #include <stdio.h>
            #include <sys/epoll.h>
            #include <time.h>
            #include <unistd.h>
            static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
            __attribute__((noinline)) static void late_handler(double end) { volatile unsigned long x = 0; while (now() < end) x++; }
            static void *loop(void *unused) {
                pthread_setname_np(pthread_self(), "late-loop");
                int epoll = epoll_create1(0);
                struct epoll_event event;
                epoll_wait(epoll, &event, 1, 500);
                late_handler(now() + 0.6);
                epoll_wait(epoll, &event, 1, 500);
                return 0;
            }
            int main(void) {
                fprintf(stderr, "ready\\n");
                sleep(2);
                pthread_t thread; pthread_create(&thread, 0, loop, 0); pthread_join(thread, 0);
                return 0;
            }
            """
        let built = try compile(source, language: "c", output: "late-loop", extraArguments: ["-g", "-O1", "-pthread"])
        let program = Process()
        program.executableURL = built.appendingPathComponent("late-loop")
        program.standardError = FileHandle.nullDevice
        try program.run()
        defer { if program.isRunning { program.terminate() } }
        let result = try runStallwatch([
            "attach", "--thread", "late-*", "--format", "json", String(program.processIdentifier),
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 1, "stdout: \(result.stdout)")
        #expect(stalls.first?.threadName == "late-loop")
        #expect(stalls.first?.symbols.contains { $0.contains("late_handler") } == true)
        #expect(try result.stalls.allSatisfy { $0.tid != $0.pid })
    }

    @Test func aSelectorMatchingNothingIsSaidOnce() throws {
        let result = try runStallwatch([
            "run", "--thread", "no-such-*", "--format", "json", "--", Products.demo, "--scenario", "baseline",
            "--stalls", "1", "--duration", "300ms", "--period", "1500ms",
        ])
        #expect(result.status == 0, "not an error: \(result.stderr)")
        let notes = result.stderr.components(separatedBy: "--thread 'no-such-*' matches no thread").count - 1
        #expect(notes == 1, "stderr: \(result.stderr)")
    }

    @Test func selectorsThatCannotMatchAreUsageErrors() throws {
        let demo = try RunningDemo(["--scenario", "baseline", "--stalls", "1"])
        defer { demo.kill() }
        let empty = try runStallwatch(["attach", "--thread", "", String(demo.pid)])
        #expect(empty.status == 64)
        #expect(empty.stderr.contains("not empty"), "stderr: \(empty.stderr)")
        // A thread of this test process, not of the demo.
        let foreign = try runStallwatch(["attach", "--thread", String(getpid()), String(demo.pid)])
        #expect(foreign.status == 64, "stderr: \(foreign.stderr)")
        #expect(foreign.stderr.contains("is a thread of pid \(getpid())"))
        #expect(foreign.stderr.split(separator: "\n").count == 1, "one line: \(foreign.stderr)")
        let underRun = try runStallwatch(["run", "--thread", String(getpid()), "--", "/bin/true"])
        #expect(underRun.status == 64, "stderr: \(underRun.stderr)")
    }
}
