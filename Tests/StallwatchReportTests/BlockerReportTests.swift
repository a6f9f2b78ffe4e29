// What a stalled thread waited for, in every format: the JSON `blocker` and `deadlock` record, the text block, the
// JUnit failure.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

/// The holder's stack: asleep in `usleep` under the program's `Store.flush()`.
let holderFrames = [
    Frame(
        address: 0x7f00_0000_9000, image: "/usr/lib/x86_64-linux-gnu/libc.so.6", offset: 0x9000,
        symbol: "clock_nanosleep"),
    Frame(
        address: 0x5500_0000_4000, image: "/app/MyDaemon", offset: 0x4000, symbol: "Store.flush()",
        file: "/src/Store.swift", line: 7),
]

/// `sampleStall()` blocked on a mutex that thread `db-writer` holds while it sleeps.
func blockedStall() -> StallReport {
    var stall = sampleStall()
    let holder = BlockingThread(
        tid: 4250, name: "db-writer", state: ThreadState(state: "S", syscall: "clock_nanosleep"), frames: holderFrames)
    stall.blocker = .lock(
        LockWait(kind: .mutex, address: 0x5500_0010_0000, operation: "FUTEX_WAIT_PRIVATE", holder: holder))
    stall.blockerSearchNanoseconds = 800_000
    return stall
}

/// Two threads, each waiting on the other's mutex.
let twoThreadDeadlock = DeadlockReport(
    pid: 4242, processName: "MyDaemon", detectedAt: 1_241_000_000, stallIdentifier: 3,
    threads: [
        .init(
            tid: 4242, name: "MyDaemon", state: ThreadState(state: "S", syscall: "futex"), frames: holderFrames,
            lockKind: .mutex, lockAddress: 0xB0, holder: 4243),
        .init(
            tid: 4243, name: "worker", state: ThreadState(state: "S", syscall: "futex"), frames: holderFrames,
            lockKind: .mutex, lockAddress: 0xA0, holder: 4242),
    ])

@Suite struct BlockerReportTests {
    @Test func theJSONBlockerNamesTheHolderWithItsStack() throws {
        let record = try JSONLines.decode(
            StallRecord.self, from: JSONLinesReporter(clock: fixedClock).render(blockedStall()))
        let blocker = try #require(record.blocker.value)
        #expect(blocker.kind == "lock" && blocker.lockKind == "mutex")
        #expect(blocker.address == "0x550000100000" && blocker.futexOp == "FUTEX_WAIT_PRIVATE")
        #expect(blocker.searchMs == .value(0.8))
        let holder = try #require(blocker.holder.value)
        #expect(holder.tid == 4250 && holder.threadName == "db-writer" && !holder.closesCycle)
        #expect(holder.doing == .value("sleeping in clock_nanosleep"))
        #expect(holder.symbols == ["clock_nanosleep", "Store.flush()"])
        #expect(holder.blocker == .null)
        #expect(
            blocker.summary
                == "waiting on a mutex (0x550000100000) held by thread db-writer (tid 4250), sleeping in clock_nanosleep"
        )
        // At detection too, and null without one.
        let detected = try JSONLines.decode(
            DetectedRecord.self, from: JSONLinesReporter(clock: fixedClock).renderDetected(blockedStall()))
        #expect(detected.blocker.value?.holder.value?.tid == 4250)
        let plain = try JSONLines.decode(
            StallRecord.self, from: JSONLinesReporter(clock: fixedClock).render(sampleStall()))
        #expect(plain.blocker == .null)
    }

    @Test func aChildWaitListsTheChildren() throws {
        var stall = sampleStall()
        stall.blocker = .child(
            ChildWait(
                target: .anyChild, call: "wait4",
                children: [
                    ChildProcess(
                        pid: 90, name: "sleep", commandLine: "sleep 5",
                        state: ThreadState(state: "S", syscall: "clock_nanosleep")),
                    ChildProcess(pid: 91, name: "cc", commandLine: "cc -c x.c", state: ThreadState(state: "R")),
                ]))
        let record = try JSONLines.decode(StallRecord.self, from: JSONLinesReporter(clock: fixedClock).render(stall))
        let blocker = try #require(record.blocker.value)
        #expect(blocker.kind == "child" && blocker.call == "wait4" && blocker.waitsFor == "anyChild")
        #expect(blocker.pid == .null && blocker.holder == .absent)
        #expect(blocker.children?.map(\.pid) == [90, 91])
        #expect(blocker.children?.map(\.doing) == ["sleeping in clock_nanosleep", "running"])
        #expect(blocker.children?.first?.commandLine == "sleep 5")
        var text = TextReporter(clock: fixedClock, colored: false)
        let block = text.render(stall)
        #expect(
            block.contains(
                "  waiting for: any child (wait4), 2 children:\n    pid 90 `sleep 5`: sleeping in clock_nanosleep\n"))
    }

    @Test func theDeadlockRecordListsEachThreadItsLockAndItsHolder() throws {
        let line = JSONLinesReporter(clock: fixedClock, host: "vm").render(twoThreadDeadlock)
        let record = try JSONLines.decode(DeadlockRecord.self, from: line)
        #expect(record.event == "deadlock" && record.schemaVersion == 3 && record.stallId == 3)
        #expect(record.threads.map(\.tid) == [4242, 4243])
        #expect(record.threads.map(\.heldBy) == [4243, 4242])
        #expect(record.threads.map(\.waitsOn.lockKind) == ["mutex", "mutex"])
        #expect(record.threads.map(\.waitsOn.address) == ["0xb0", "0xa0"])
        #expect(record.threads[1].symbols == ["clock_nanosleep", "Store.flush()"])
        #expect(record.summary == "thread MyDaemon (tid 4242) and thread worker (tid 4243) wait on each other's locks")
    }

    @Test func textSaysWhoHoldsTheLockAndDeadlockPlainly() {
        var text = TextReporter(clock: fixedClock, colored: false)
        let block = text.render(blockedStall())
        #expect(
            block.contains(
                "\n  waiting on: mutex 0x550000100000 (FUTEX_WAIT_PRIVATE), held by thread db-writer (tid 4250), sleeping in clock_nanosleep\n"
            ))
        #expect(block.contains("\n    stack of thread db-writer (tid 4250):\n"))
        #expect(block.contains("Store.flush()"))
        let deadlock = text.render(twoThreadDeadlock)
        #expect(
            deadlock.hasPrefix(
                "stallwatch: DEADLOCK in MyDaemon (pid 4242): thread MyDaemon (tid 4242) and thread worker (tid 4243) wait on each other's locks"
            ))
        #expect(
            deadlock.contains("\n  thread worker (tid 4243) waits on mutex 0xa0 held by thread MyDaemon (tid 4242)\n"))
        var summary = RunSummary(
            stalls: [blockedStall()], runNanoseconds: 4_000_000_000, watchedPids: [4242], exitStatus: 0, warnings: [])
        summary.deadlockCount = 1
        let closing = text.render(summary)
        #expect(
            closing.hasPrefix(
                "stallwatch: 1 stall, 612 ms stalled (15.3% of 4.0 s), longest 612 ms; 1 DEADLOCK; exit status 0\n"),
            "\(closing)")
    }

    @Test func junitNamesTheBlockerAndFailsOnADeadlock() throws {
        let stalls = [blockedStall()]
        let summary = RunSummary(
            stalls: stalls, runNanoseconds: 4_000_000_000, watchedPids: [4242], exitStatus: 0, warnings: [])
        var report = JUnitReport(
            stalls: stalls, summary: summary, budget: StallBudget(failOnStall: true), baseline: [],
            startOfRun: 1_000_000_000, endOfRun: 5_000_000_000, command: "./MyDaemon", clock: fixedClock)
        report.deadlocks = [twoThreadDeadlock]
        let xml = report.render()
        #expect(try schemaProblem(xml) == nil)
        #expect(xml.contains("held by thread db-writer (tid 4250), sleeping in clock_nanosleep\" type=\"stall\">"))
        #expect(
            xml.contains(
                "<failure message=\"DEADLOCK in pid 4242: thread MyDaemon (tid 4242) and thread worker (tid 4243)"))
        #expect(xml.contains("1 deadlock: threads wait on each other&apos;s locks for good"))
        // The holder's stack is in the failure's text.
        #expect(xml.contains("stack of thread db-writer (tid 4250):\n#0 clock_nanosleep"))
    }
}
