// Who blocked it: a stalled event loop blocked on a mutex names the holder (tid, name, what it does, its stack); a PI
// mutex and Swift's Synchronization.Mutex their holder from the futex word; an ABBA deadlock is one deadlock record with each thread, lock and holder
// right, DEADLOCK in text and a broken budget; a wait for a child names the child, a wait for any child every child.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

/// Tests/Fixtures/Programs/blockers.c, built once, and what it says about itself on stderr.
enum Blockers {
    static let built: Result<String, Error> = Result {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/Programs/blockers.c")
        let text = try String(contentsOf: source, encoding: .utf8)
        return try compile(text, language: "c", output: "blockers", extraArguments: ["-O1", "-g", "-pthread"])
            .appendingPathComponent("blockers").path
    }

    /// The `key=value` fields of the fixture's line that starts `blockers: WHAT `.
    static func truth(_ what: String, in stderr: String) -> [[String: String]] {
        stderr.split(separator: "\n").filter { $0.hasPrefix("blockers: \(what) ") }.map { DemoStall.fields(of: $0) }
    }

    /// `run --format json` of one scenario, and the fixture's own lines.
    static func run(_ scenario: String, options: [String] = []) throws -> RunResult {
        try runStallwatch(["run", "--format", "json"] + options + ["--", try built.get(), scenario])
    }
}

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct BlockerTests {
    /// The one stall of a run, blocked in the fixture's `function`.
    func onlyStall(_ result: RunResult, in function: String) throws -> StallRecord {
        let stalls = try result.stalls
        try #require(stalls.count == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(stalls[0].tid == stalls[0].pid, "the main thread's loop")
        #expect(stalls[0].symbols.contains(function), "\(stalls[0].symbols.prefix(6))")
        return stalls[0]
    }

    func expectTheSleepingHolder(_ blocker: BlockerRecord, stderr: String) throws {
        let holderTruth = try #require(Blockers.truth("holder", in: stderr).first)
        let lock = try #require(Blockers.truth("lock", in: stderr).first?["address"])
        #expect(blocker.kind == "lock")
        #expect(blocker.address == lock, "the mutex the fixture printed")
        let holder = try #require(blocker.holder.value, "note: \(blocker.note)")
        #expect(holder.tid == Int(holderTruth["tid"] ?? ""))
        #expect(holder.threadName == "holder")
        #expect(holder.threadState?.syscall == "clock_nanosleep")
        #expect(holder.doing.value?.contains("nanosleep") == true, "\(holder.doing)")
        #expect(holder.symbols.contains("hold_while_sleeping"), "\(holder.symbols)")
        #expect(holder.symbols.contains("holder_thread"))
        #expect(!holder.closesCycle && holder.blocker == .null)
        if Sanitizer.timingIsMeasurable {
            // The budget is 5 ms (Scripts/bench measures it); a debug build on a busy machine gets ten times that.
            #expect((blocker.searchMs.value ?? 999) < 50, "\(blocker.searchMs)")
        }
    }

    @Test func aMutexHeldBySleepingThreadNamesItsHolderStateAndStack() throws {
        let result = try Blockers.run("mutex")
        #expect(result.status == 0, "\(result.stderr)")
        let stall = try onlyStall(result, in: "wait_for_holder")
        let blocker = try #require(stall.blocker.value)
        #expect(blocker.lockKind == "mutex" && blocker.futexOp == "FUTEX_WAIT_PRIVATE")
        try expectTheSleepingHolder(blocker, stderr: result.stderr)
        let detected = try result.records.compactMap(\.detected)
        #expect(detected.first?.blocker.value?.holder.value?.threadName == "holder", "at detection already")
        #expect(try result.records.compactMap(\.deadlock).isEmpty)
        #expect(try result.summary?.deadlocks == 0)
    }

    @Test func aPriorityInheritanceMutexNamesItsHolderFromTheFutexWord() throws {
        let result = try Blockers.run("pi")
        #expect(result.status == 0, "\(result.stderr)")
        let blocker = try #require(try onlyStall(result, in: "wait_for_holder").blocker.value)
        #expect(blocker.lockKind == "piMutex")
        #expect(blocker.futexOp == "FUTEX_LOCK_PI_PRIVATE")
        try expectTheSleepingHolder(blocker, stderr: result.stderr)
    }

    /// Swift's `Synchronization.Mutex` on Linux is a PI futex of its own: no pthread frame, the owner in the word.
    @Test func aSwiftMutexNamesItsHolderFromTheFutexWord() throws {
        let program = try compileSwift(
            """
            import Foundation
            import Synchronization

            let mutex = Mutex(0)
            let go = DispatchSemaphore(value: 0)
            let taken = DispatchSemaphore(value: 0)
            @inline(never) func holdWhileSleeping() {
                go.wait()
                mutex.withLock { value in
                    taken.signal()
                    usleep(900_000)
                    value += 1
                }
            }
            @inline(never) func waitForHolder() { mutex.withLock { value in value += 1 } }
            Thread { holdWhileSleeping() }.start()
            let timer = Timer(fire: Date().addingTimeInterval(0.4), interval: 0, repeats: false) { _ in
                go.signal()
                taken.wait()
                waitForHolder()
            }
            RunLoop.main.add(timer, forMode: .default)
            RunLoop.main.run(until: Date().addingTimeInterval(2))
            """, name: "swift-mutex")
        let result = try runStallwatch(["run", "--format", "json", "--", program])
        #expect(result.status == 0, "\(result.stderr)")
        let stall = try onlyStall(result, in: "waitForHolder()")
        let blocker = try #require(stall.blocker.value)
        #expect(blocker.lockKind == "piFutex" && blocker.futexOp == "FUTEX_LOCK_PI_PRIVATE", "\(blocker.summary)")
        let holder = try #require(blocker.holder.value, "note: \(blocker.note)")
        #expect(holder.tid != stall.pid)
        #expect(holder.symbols.contains("holdWhileSleeping()"), "\(holder.symbols)")
        #expect(holder.doing.value?.contains("nanosleep") == true)
    }

    /// A mutex whose owner field names a thread of another process (stallwatch itself): nobody is named, and why.
    @Test func anOwnerOfAnotherProcessIsNeverNamed() throws {
        let result = try Blockers.run("forged")
        #expect(result.status == 0, "\(result.stderr)")
        let owner = try #require(Blockers.truth("forged", in: result.stderr).first?["owner"])
        let blocker = try #require(try onlyStall(result, in: "wait_for_holder").blocker.value)
        #expect(blocker.lockKind == "mutex")
        #expect(blocker.holder == .null, "\(blocker.summary)")
        #expect(blocker.note == .value("the mutex's owner field names tid \(owner), no live thread of this process"))
        #expect(blocker.summary.hasSuffix(", owner unknown"))
    }

    @Test func anABBADeadlockIsOneRecordWithEachThreadItsLockAndHolder() throws {
        let junit = FileManager.default.temporaryDirectory.appendingPathComponent("deadlock-\(UUID()).xml").path
        defer { try? FileManager.default.removeItem(atPath: junit) }
        let result = try Blockers.run("abba", options: ["--fail-on-stall", "--junit", junit])
        #expect(result.status == ExitCode.budgetBroken, "\(result.stderr)")
        let main = try #require(Int(Blockers.truth("main", in: result.stderr).first?["tid"] ?? ""))
        let worker = try #require(Int(Blockers.truth("worker", in: result.stderr).first?["tid"] ?? ""))
        let locks = try #require(Blockers.truth("lock", in: result.stderr).first)
        let deadlocks = try result.records.compactMap(\.deadlock)
        try #require(deadlocks.count == 1, "one record for the cycle: \(result.stdout)")
        let threads = Dictionary(uniqueKeysWithValues: deadlocks[0].threads.map { ($0.tid, $0) })
        #expect(Set(threads.keys) == [main, worker])
        // main holds A and waits on B; the worker holds B and waits on A.
        #expect(threads[main]?.waitsOn.address == locks["b"] && threads[main]?.heldBy == worker)
        #expect(threads[worker]?.waitsOn.address == locks["a"] && threads[worker]?.heldBy == main)
        #expect(threads[main]?.symbols.contains("take_both_locks") == true)
        #expect(threads[worker]?.symbols.contains("worker_thread") == true)
        #expect(threads[worker]?.threadName == "worker")
        let stall = try onlyStall(result, in: "take_both_locks")
        let holder = try #require(stall.blocker.value?.holder.value)
        #expect(holder.tid == worker && holder.blocker.value?.holder.value?.closesCycle == true)
        let summary = try #require(try result.summary)
        #expect(summary.deadlocks == 1)
        #expect(summary.budget?.violations.contains { $0.contains("1 deadlock") } == true, "\(summary.budget as Any)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("<failure message=\"DEADLOCK in pid"), "\(xml)")
    }

    @Test func theTextReportSaysDeadlockPlainly() throws {
        let result = try runStallwatch(["run", "--", try Blockers.built.get(), "abba"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("stallwatch: DEADLOCK in blockers (pid ") }.count == 1, "\(result.stdout)")
        #expect(result.stdout.contains("wait on each other's locks"))
        #expect(lines.contains { $0.hasPrefix("stallwatch: 1 stall, ") && $0.contains("; 1 DEADLOCK; exit status 0") })
    }

    @Test func aParentWaitingOnItsChildNamesTheChild() throws {
        let result = try Blockers.run("child")
        #expect(result.status == 0, "\(result.stderr)")
        let child = try #require(Int(Blockers.truth("child", in: result.stderr).first?["pid"] ?? ""))
        let blocker = try #require(try onlyStall(result, in: "wait_for_child").blocker.value)
        #expect(blocker.kind == "child" && blocker.call == "wait4" && blocker.waitsFor == "child")
        #expect(blocker.pid == .value(child))
        let named = try #require(blocker.children?.first)
        #expect(blocker.children?.count == 1)
        #expect(named.pid == child)
        #expect(named.commandLine == "blockers child-sleep 900")
        #expect(named.doing.contains("nanosleep"), "\(named.doing)")
    }

    @Test func aWaitForAnyChildListsEveryChild() throws {
        let result = try Blockers.run("children")
        #expect(result.status == 0, "\(result.stderr)")
        let children = Set(Blockers.truth("child", in: result.stderr).compactMap { $0["pid"].flatMap(Int.init) })
        #expect(children.count == 2)
        let blocker = try #require(try onlyStall(result, in: "wait_for_any_child").blocker.value)
        #expect(blocker.waitsFor == "anyChild" && blocker.pid == .null)
        #expect(Set(blocker.children?.map(\.pid) ?? []) == children)
        #expect(
            Set(blocker.children?.compactMap(\.commandLine) ?? [])
                == ["blockers child-sleep 900", "blockers child-sleep 1000"])
    }

    /// From outside, without an agent: the same holder, from a process stallwatch did not start.
    @Test func attachNamesTheHolderFromOutside() throws {
        let program = try RunningProgram(try Blockers.built.get(), ["mutex", "2500"])
        #expect(program.waitForThread(named: "holder"))
        let result = try runStallwatch(["attach", "--format", "json", String(program.pid)])
        program.process.waitUntilExit()
        #expect(result.status == 0, "\(result.stderr)")
        let stall = try onlyStall(result, in: "wait_for_holder")
        let holder = try #require(stall.blocker.value?.holder.value, "\(stall.blocker)")
        #expect(holder.threadName == "holder" && holder.symbols.contains("hold_while_sleeping"))
        #expect(holder.doing.value?.contains("nanosleep") == true)
    }
}
