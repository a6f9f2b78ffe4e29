// Stalls in tasks on Swift concurrency's executor threads (`--thread`): found through the agent's view of each job,
// with the thread, the task's async callers and the stall's real length, in every way a task can block its thread.
import Foundation
import StallwatchTestSupport
import Testing

extension AsyncProgram {
    /// A detached task (on an executor thread, never the main one) awaits `level1` → `level2` → `level3`, which
    /// blocks its thread in `blockHere(_:)` for 700 ms, while the main actor stays responsive.
    ///
    /// `PROGRAM HOW WHEN`: HOW is `cpu` (a busy loop), `lock` (a condition wait) or `sleep` (`usleep`); WHEN is
    /// `now`, `afterSleep` (the blocking job is the task resumed after a `Task.sleep`: a delayed job) or
    /// `afterTolerantSleep` (resumed after a sleep with a tolerance: a job run from a dispatch timer); a third
    /// argument sets the wait before it all, in milliseconds (300). `PROGRAM short`
    /// instead runs 500 jobs of 4 ms, each ended by a `Task.yield()`: busy for 2 s, but never one long job.
    static let executorTask = """
        import Foundation

        nonisolated(unsafe) var blocked = 0
        @inline(never) func blockHere(_ how: String) {
            switch how {
            case "lock":
                let condition = NSCondition()
                condition.lock()
                if condition.wait(until: Date().addingTimeInterval(0.7)) { blocked = -1 }
                condition.unlock()
            case "sleep": if usleep(700_000) != 0 { blocked = -1 }
            default:
                let end = Date().addingTimeInterval(0.7)
                while Date() < end {}
            }
            // Work after the wait: a call in last place would be a tail call, leaving this frame off the stack.
            blocked += 1
        }
        @inline(never) func level3(_ how: String) async { await Task.yield(); blockHere(how) }
        @inline(never) func level2(_ how: String) async { await level3(how) }
        @inline(never) func level1(_ how: String, _ when: String) async {
            switch when {
            case "afterSleep": try? await Task.sleep(nanoseconds: 200_000_000)
            case "afterTolerantSleep": try? await Task.sleep(for: .milliseconds(200), tolerance: .milliseconds(20))
            default: break
            }
            await level2(how)
        }
        @inline(never) func shortJobs() async {
            for _ in 0..<500 {
                let end = Date().addingTimeInterval(0.004)
                while Date() < end {}
                await Task.yield()
            }
        }

        @main struct Program {
            static func main() async {
                let arguments = CommandLine.arguments
                // A moment for the watcher to start (or for `attach` to connect) before anything happens.
                let settle = arguments.count > 3 ? UInt64(arguments[3]) ?? 300 : 300
                try? await Task.sleep(nanoseconds: settle * 1_000_000)
                if arguments[1] == "short" {
                    await Task.detached { await shortJobs() }.value
                } else {
                    await Task.detached { await level1(arguments[1], arguments[2]) }.value
                }
                try? await Task.sleep(nanoseconds: 300_000_000)
            }
        }
        """

    /// The chain a stall in `blockHere` must show, innermost first.
    static let executorChain = ["level3(_:)", "level2(_:)", "level1(_:_:)"]
}

@Suite(.serialized) struct ExecutorThreadTests {
    func build(optimized: Bool) throws -> String {
        try AsyncProgram.build(AsyncProgram.executorTask, name: "executor-task", optimized: optimized)
    }

    /// Checks the one stall a blocking run reports: on an executor thread, in phase `task`, blocking in
    /// `blockHere(_:)` under its async callers, and as long as the block (700 ms; the job's ends are timed exactly).
    func expectTheBlockedTask(_ result: RunResult, _ context: String) throws {
        #expect(result.status == 0, "\(context): \(result.stderr)")
        // Under a sanitizer the loaded machine can keep another thread off its CPU past the threshold, a real stall of
        // that thread (`--thread all`): there, only the task's stall counts.
        let stalls = try result.stalls.filter {
            Sanitizer.timingIsMeasurable || $0.culprit?.symbol == "blockHere(_:)"
        }
        try #require(stalls.count == 1, "\(context): \(stalls.map(\.activity))\n\(result.stderr)")
        let stall = stalls[0]
        #expect(stall.tid != stall.pid, "\(context): the main thread was reported")
        #expect(stall.threadName?.contains("qos") == true, "\(context): \(stall.threadName ?? "no name")")
        #expect(stall.activity == "task", "\(context)")
        #expect(stall.culprit?.symbol == "blockHere(_:)", "\(context): \(stall.culprit?.symbol ?? "none")")
        let sample = try #require(stall.samples.first { $0.frames.contains(where: \.async) }, "\(context): no async")
        let chain = logicalChain(sample.frames) ?? []
        #expect(chain.filter { $0.hasPrefix("level") } == AsyncProgram.executorChain, "\(context): \(chain)")
        let duration = try #require(stall.durationMs.value, "\(context): unfinished")
        #expect(duration >= 690 && (!Sanitizer.timingIsMeasurable || duration < 1500), "\(context): \(duration) ms")
    }

    @Test(arguments: ["cpu", "lock", "sleep"], [false, true])
    func aTaskThatBlocksItsExecutorThreadIsFound(how: String, optimized: Bool) throws {
        let path = try build(optimized: optimized)
        let result = try runStallwatch(["run", "--thread", "all", "--format", "json", "--", path, how, "now"])
        try expectTheBlockedTask(result, "\(how), optimized \(optimized)")
    }

    /// A task resumed after a sleep runs as a delayed job (`dispatch_after_f`), or with a tolerance from a dispatch
    /// timer: both are seen, on a thread picked by a name glob.
    @Test(arguments: ["afterSleep", "afterTolerantSleep"])
    func aTaskResumedAfterASleepIsFound(when: String) throws {
        let path = try build(optimized: false)
        let result = try runStallwatch(["run", "--thread", "*qos*", "--format", "json", "--", path, "cpu", when])
        try expectTheBlockedTask(result, when)
    }

    /// 500 jobs of 4 ms back to back keep the thread busy for 2 s: no single job is long, so no stall. The threshold
    /// is raised (a stall needs 750 ms) because a loaded machine can leave a runnable thread off its CPU for a few
    /// hundred ms — a real stall of that thread, which the report blames on the competition — yet the 2 s of busy
    /// jobs are far beyond it, so a watch that saw them as one job would report them.
    @Test func manyShortJobsAreNoStall() throws {
        let path = try build(optimized: false)
        let result = try runStallwatch(
            ["run", "--thread", "all", "--threshold", "250ms", "--format", "json", "--", path, "short"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // A stall of a thread kept off its CPU (other builds and tests running on two cores) is real, and its report
        // says so: most of it spent runnable. A watch that took the jobs for one would report a stall spent running.
        let unexplained = try result.stalls.filter { ($0.thread.value?.runnablePercent?.value ?? 0) < 50 }
        #expect(
            unexplained.isEmpty,
            "\(unexplained.map { "\($0.durationMs) ms, runnable \(String(describing: $0.thread.value?.runnablePercent))" })"
        )
    }

    /// `attach --thread` to a process whose agent listens: the agent watches the executor threads from then on.
    @Test func attachThroughTheAgentWatchesExecutorThreads() throws {
        let program = try RunningProgram(try build(optimized: false), ["cpu", "now", "1500"], listening: true)
        // The listening agent is up before main(); the block comes 1.5 s after start.
        usleep(300_000)
        let result = try runStallwatch(
            ["attach", "--mode", "agent", "--thread", "*qos*", "--format", "json", String(program.pid)])
        try expectTheBlockedTask(result, "attach")
    }

    /// `stallwatch demo --scenario task` watches the executor threads by itself and finds each stall of the task, on
    /// the thread and for as long as the demo measured, with the task's callers.
    @Test func theDemosTaskScenarioIsFoundOnItsThread() throws {
        let result = try runStallwatch(
            ["demo", "--scenario", "task", "--format", "json", "--", "--stalls", "2", "--duration", "500ms"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        let stalls = try result.stalls
        try #require(truth.count == 2 && stalls.count == 2, "\(result.stdout)\n\(result.stderr)")
        for (stall, actual) in zip(stalls, truth) {
            #expect(stall.tid == actual.tid && stall.tid != stall.pid)
            #expect(stall.activity == "task")
            #expect(stall.culprit?.symbol?.contains("PhotoImporter.decodeFullResolution") == true)
            let sample = try #require(stall.samples.first { $0.frames.contains(where: \.async) }, "no async frames")
            let chain = logicalChain(sample.frames) ?? []
            #expect(chain.contains { $0.contains("PhotoImporter.importLibrary") }, "\(chain)")
            let duration = try #require(stall.durationMs.value)
            #expect(duration >= actual.durationMs - 5 && duration <= actual.durationMs + 30, "\(duration) ms")
        }
    }

    /// Without `--thread` only the main thread is watched: the blocked background task is not its stall.
    @Test func theMainThreadAloneIsTheDefault() throws {
        let path = try build(optimized: false)
        let result = try runStallwatch(["run", "--format", "json", "--", path, "cpu", "now"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.isEmpty, "\(stalls.map(\.tid))")
    }
}
