// What a blocked thread waits for, from what /proc and its stack say: the syscall line, the futex operation, the
// lock's kind from the libc frames, a wait's child; the chain of holders and the deadlock it closes.
import Testing

@testable import StallwatchCore

func frames(_ symbols: String...) -> [Frame] {
    symbols.map { Frame(address: 0x1000, image: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: $0) }
}

@Suite struct SyscallReadingTests {
    @Test func readsTheCallAndItsArguments() {
        let reading = SyscallReading(line: "202 0x55adcf88f0e0 0x80 0x2 0x0 0x0 0x0 0x7fff04f28858 0x7f6fc468712b\n")
        #expect(reading == SyscallReading(number: 202, arguments: [0x55ad_cf88_f0e0, 0x80, 2, 0, 0, 0]))
        #expect(reading?.name == "futex")
    }

    @Test func aRunningThreadOrGarbageIsNoReading() {
        for line in [
            "running", "-1 0x7ffc 0x7f00", "", "202 0x1 0x2", "202 1 2 3 4 5 6 7 8", "x 0x1 0x1 0x1 0x1 0x1 0x1",
        ] {
            #expect(SyscallReading(line: line) == nil, "\(line)")
        }
    }

    @Test func futexOperationsAreNamedAsTheKernelNamesThem() {
        #expect(FutexOperation(0x80).name == "FUTEX_WAIT_PRIVATE")
        #expect(FutexOperation(0x86).name == "FUTEX_LOCK_PI_PRIVATE")
        #expect(FutexOperation(0x189).name == "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME")
        #expect(FutexOperation(13).name == "FUTEX_LOCK_PI2")
        #expect(FutexOperation(99).name == "FUTEX_OP_99")
        #expect(FutexOperation(0x86).locksPriorityInheritance && !FutexOperation(0x86).isPlainWait)
        #expect(FutexOperation(0x89).isPlainWait)
    }

    @Test func waitArgumentsNameTheChildOrTheGroup() {
        func target(_ number: Int, _ arguments: [UInt64]) -> ChildWait.Target? {
            ChildWait.Target(call: SyscallReading(number: number, arguments: arguments + [0, 0, 0, 0]))
        }
        #expect(target(61, [120, 0]) == .child(120))
        // The register of an int argument may hold -1 in its low half only.
        #expect(target(61, [0xFFFF_FFFF, 0]) == .anyChild)
        #expect(target(61, [UInt64.max, 0]) == .anyChild)
        #expect(target(61, [0, 0]) == .processGroup(0))
        #expect(target(61, [UInt64(UInt32(bitPattern: -7)), 0]) == .processGroup(7))
        #expect(target(61, [0x8000_0000, 0]) == nil)
        #expect(target(247, [0, 0]) == .anyChild)
        #expect(target(247, [1, 120]) == .child(120))
        #expect(target(247, [2, 0]) == .processGroup(0))
        #expect(target(247, [3, 5]) == .pidDescriptor(5))
        #expect(target(247, [1, 0]) == nil)
        #expect(target(247, [9, 1]) == nil)
        #expect(target(202, [0, 0]) == nil)
    }
}

@Suite struct LockClassifierTests {
    let wait = FutexOperation(0x80)

    @Test func theLibcFunctionsSayWhichLock() {
        #expect(LockClassifier.kind(operation: wait, frames: frames("__lll_lock_wait", "pthread_mutex_lock")) == .mutex)
        #expect(
            LockClassifier.kind(operation: wait, frames: frames("__lll_lock_wait", "___pthread_mutex_lock")) == .mutex)
        #expect(
            LockClassifier.kind(
                operation: FutexOperation(0x189),
                frames: frames("__futex_abstimed_wait_common64", "__lll_clocklock_wait", "pthread_mutex_timedlock"))
                == .mutex)
        #expect(
            LockClassifier.kind(operation: wait, frames: frames("__futex_abstimed_wait_common", "__pthread_cond_wait"))
                == .conditionVariable)
        #expect(
            LockClassifier.kind(
                operation: wait, frames: frames("__futex_abstimed_wait_common", "pthread_rwlock_wrlock"))
                == .rwlock)
        #expect(
            LockClassifier.kind(operation: wait, frames: frames("do_futex_wait", "__new_sem_wait_slow64")) == .semaphore
        )
        // GCC's clones keep their function's name before the dot.
        #expect(
            LockClassifier.kind(
                operation: FutexOperation(0x189),
                frames: frames("__futex_abstimed_wait_common", "__new_sem_wait_slow64.constprop.0")) == .semaphore)
        #expect(
            LockClassifier.kind(
                operation: wait, frames: frames("__futex_abstimed_wait_common", "__pthread_clockjoin_ex"))
                == .threadJoin)
        #expect(
            LockClassifier.kind(operation: wait, frames: frames("__lll_lock_wait_private", "_IO_flush_all"))
                == .libcLock)
    }

    @Test func priorityInheritanceComesFromTheOperation() {
        let lock = FutexOperation(0x86)
        #expect(
            LockClassifier.kind(operation: lock, frames: frames("__futex_lock_pi64", "__pthread_mutex_lock_full"))
                == .piMutex)
        #expect(
            LockClassifier.kind(operation: lock, frames: frames("syscall", "_MutexHandle._lockSlow(_:)")) == .piFutex)
        #expect(LockClassifier.kind(operation: lock, frames: []) == .piFutex)
        #expect(LockClassifier.kind(operation: FutexOperation(11), frames: []) == .conditionVariable)
    }

    @Test func withoutFramesOrWithOthersAWaitIsAnUnknownFutex() {
        #expect(LockClassifier.kind(operation: wait, frames: []) == .futex)
        // A function of the program's own that only starts like libc's is not taken for it.
        #expect(LockClassifier.kind(operation: wait, frames: frames("syscall", "pthread_mutex_lock_my_way")) == .futex)
        #expect(LockClassifier.kind(operation: FutexOperation(1), frames: frames("pthread_mutex_lock")) == .futex)
    }
}

@Suite struct DeadlockReportTests {
    func thread(_ tid: Int32, waitsOn address: UInt64? = nil, heldBy holder: BlockingThread? = nil) -> BlockingThread {
        var thread = BlockingThread(tid: tid, name: "t\(tid)", state: ThreadState(state: "S", syscall: "futex"))
        if let address {
            thread.blocker = .lock(LockWait(kind: .mutex, address: address, operation: "", holder: holder))
        }
        return thread
    }

    func find(_ blocker: Blocker?, stalled: Int32 = 1) -> DeadlockReport? {
        DeadlockReport.find(
            in: blocker, stalled: thread(stalled), pid: 1, processName: "p", detectedAt: 5, stallIdentifier: 3)
    }

    @Test func twoThreadsWaitingOnEachOtherAreOneDeadlock() throws {
        let cycle = thread(2, waitsOn: 0xA, heldBy: BlockingThread(tid: 1, name: "t1", state: nil, closesCycle: true))
        let blocker = Blocker.lock(LockWait(kind: .mutex, address: 0xB, operation: "", holder: cycle))
        let deadlock = try #require(find(blocker))
        #expect(deadlock.threads.map(\.tid) == [1, 2])
        #expect(deadlock.threads.map(\.lockAddress) == [0xB, 0xA])
        #expect(deadlock.threads.map(\.holder) == [2, 1])
        #expect(deadlock.summary == "thread t1 (tid 1) and thread t2 (tid 2) wait on each other's locks")
        #expect(blocker.closesCycle && blocker.rootHolder == nil)
        #expect(blocker.summary.hasSuffix(": a deadlock"))
        // Entered from the other thread, it is the same deadlock.
        let other = thread(1, waitsOn: 0xB, heldBy: BlockingThread(tid: 2, name: "t2", state: nil, closesCycle: true))
        let fromTwo = find(.lock(LockWait(kind: .mutex, address: 0xA, operation: "", holder: other)), stalled: 2)
        #expect(fromTwo?.key == deadlock.key)
    }

    @Test func aCycleTheStalledThreadOnlyWaitsOnLeavesItOut() throws {
        let three = thread(3, waitsOn: 0xC, heldBy: BlockingThread(tid: 2, name: "t2", state: nil, closesCycle: true))
        let two = thread(2, waitsOn: 0xD, heldBy: three)
        let deadlock = try #require(find(.lock(LockWait(kind: .mutex, address: 0xE, operation: "", holder: two))))
        #expect(deadlock.threads.map(\.tid) == [2, 3])
    }

    @Test func aThreadWaitingOnItsOwnMutexIsADeadlockOfOne() throws {
        let itself = BlockingThread(tid: 1, name: "t1", state: nil, closesCycle: true)
        let deadlock = try #require(find(.lock(LockWait(kind: .mutex, address: 0xA, operation: "", holder: itself))))
        #expect(deadlock.threads.count == 1)
        #expect(deadlock.summary == "thread t1 (tid 1) waits on a mutex it holds itself")
    }

    @Test func aChainThatEndsIsNoDeadlockAndEndsAtItsRoot() {
        var sleeper = thread(3)
        sleeper.state = ThreadState(state: "S", syscall: "clock_nanosleep")
        let blocker = Blocker.lock(
            LockWait(kind: .mutex, address: 0xA, operation: "", holder: thread(2, waitsOn: 0xB, heldBy: sleeper)))
        #expect(find(blocker) == nil)
        #expect(find(nil) == nil)
        #expect(find(.lock(LockWait(kind: .conditionVariable, address: 0xA, operation: ""))) == nil)
        #expect(blocker.rootHolder?.tid == 3)
        #expect(
            blocker.summary
                == "waiting on a mutex (0xa) held by thread t2 (tid 2), which waits on thread t3 (tid 3), sleeping in clock_nanosleep"
        )
    }
}

@Suite struct BlockingThreadTests {
    @Test func whatAHolderDoesIsSaidInWords() {
        func activity(_ state: ThreadState?) -> String { BlockingThread(tid: 2, name: "t", state: state).activity }
        #expect(activity(ThreadState(state: "R")) == "running")
        #expect(activity(ThreadState(state: "S", syscall: "clock_nanosleep")) == "sleeping in clock_nanosleep")
        #expect(activity(ThreadState(state: "S", syscall: "futex")) == "blocked on a lock (futex)")
        #expect(activity(ThreadState(state: "S", syscall: "read")) == "waiting for I/O in read")
        #expect(activity(nil) == "state unknown")
        // A holder stopped before (a ptrace stop interrupted its sleep) shows restart_syscall: its wait channel says.
        #expect(
            activity(ThreadState(state: "S", syscall: "restart_syscall", waitChannel: "hrtimer_nanosleep"))
                == "sleeping in hrtimer_nanosleep")
        #expect(
            ChildProcess(pid: 3, name: "c", commandLine: nil, state: ThreadState(state: "Z")).activity.contains(
                "zombie"))
    }

    @Test func theFirstBlockerFoundIsKept() {
        var assembler = StallAssemblerTests().assembler()
        let first = Blocker.lock(LockWait(kind: .mutex, address: 0x10, operation: "FUTEX_WAIT"))
        assembler.note(blocker: first, searchNanoseconds: 500_000)
        assembler.note(blocker: .lock(LockWait(kind: .semaphore, address: 0x20, operation: "FUTEX_WAIT")))
        #expect(assembler.report.blocker == first)
        #expect(assembler.report.blockerSearchNanoseconds == 500_000)
    }
}
