// What a blocked thread waited for, and who: a lock and its holder, a child process, a descriptor's other end. One kind
// per case, so a CPU census or a starved pool can be added beside them without touching the others.

/// What a stalled thread was waiting for, as far as stallwatch could tell at capture time.
///
/// Read from outside the workload (`/proc`, the futex word or mutex in its memory, the holder's stack by ptrace)
/// when the stalled thread was blocked in `futex`, `wait4` or `waitid`. Everything read from the workload is
/// untrusted: a value that does not check out gives a note saying what is unknown, never a guessed holder.
public indirect enum Blocker: Equatable, Sendable {
    /// A futex: a mutex, a priority-inheritance futex, a condition variable, a rwlock, a semaphore, a join.
    case lock(LockWait)
    /// A child process (`wait4`, `waitid`).
    case child(ChildWait)
    /// One file descriptor (`read`, `write`, `recv*`, `send*`, `poll`): a pipe, a socket, a file.
    case descriptor(DescriptorWait)

    /// The record's `kind`: `lock`, `child` or `descriptor`.
    public var kind: String {
        switch self {
        case .lock: "lock"
        case .child: "child"
        case .descriptor: "descriptor"
        }
    }

    /// The lock wait, for a lock.
    public var lock: LockWait? {
        if case .lock(let wait) = self { return wait }
        return nil
    }

    /// The child wait, for a child.
    public var child: ChildWait? {
        if case .child(let wait) = self { return wait }
        return nil
    }

    /// The descriptor wait, for a descriptor.
    public var descriptor: DescriptorWait? {
        if case .descriptor(let wait) = self { return wait }
        return nil
    }
}

/// Which kind of lock a futex wait is, from the futex operation and the waiting thread's innermost library frames.
public enum LockKind: String, Sendable, Equatable, CaseIterable {
    /// A glibc `pthread_mutex_t` (what `NSLock`, `NSRecursiveLock` and `pthread_mutex_lock` use): owner at `__owner`.
    case mutex
    /// A glibc mutex with `PTHREAD_PRIO_INHERIT`: the kernel's PI futex, owner in the futex word.
    case piMutex
    /// A glibc robust mutex (`PTHREAD_MUTEX_ROBUST`): owner in the futex word and at `__owner`.
    case robustMutex
    /// A PI futex that is no pthread mutex (Swift's `Synchronization.Mutex` on Linux): owner in the futex word.
    case piFutex
    /// A condition variable: no owner, the thread waits for a signal.
    case conditionVariable
    /// A reader-writer lock: glibc keeps no owner for readers.
    case rwlock
    /// A semaphore (`sem_wait`, `DispatchSemaphore`): no owner.
    case semaphore
    /// `pthread_join`: the futex word is the joined thread's tid, which the kernel clears when it exits.
    case threadJoin
    /// One of libc's own internal locks (`__lll_lock_wait_private`): no owner recorded.
    case libcLock
    /// A futex wait stallwatch cannot place.
    case futex

    /// "mutex", "PI mutex", ...: how reports name it.
    public var phrase: String {
        switch self {
        case .mutex: "mutex"
        case .piMutex: "priority-inheritance mutex"
        case .robustMutex: "robust mutex"
        case .piFutex: "PI futex lock"
        case .conditionVariable: "condition variable"
        case .rwlock: "rwlock"
        case .semaphore: "semaphore"
        case .threadJoin: "thread join"
        case .libcLock: "libc internal lock"
        case .futex: "futex"
        }
    }

    /// Whether a lock of this kind has an owner stallwatch may read: mutexes and PI futexes (a join names the thread
    /// waited for).
    public var hasOwner: Bool {
        switch self {
        case .mutex, .piMutex, .robustMutex, .piFutex, .threadJoin: true
        case .conditionVariable, .rwlock, .semaphore, .libcLock, .futex: false
        }
    }
}

/// A thread waiting on a futex: which lock, and who holds it where that can be known.
public struct LockWait: Equatable, Sendable {
    public var kind: LockKind
    /// The futex word's address in the workload.
    public var address: UInt64
    /// The futex operation as the kernel names it (`FUTEX_WAIT_PRIVATE`, `FUTEX_LOCK_PI_PRIVATE`).
    public var operation: String
    /// The thread holding the lock (or, for a join, the thread waited for); nil where it is unknown or the kind has no
    /// owner.
    public var holder: BlockingThread?
    /// Why no holder is named, or what else is known (a condition variable has no owner); nil with a holder.
    public var note: String?

    public init(
        kind: LockKind, address: UInt64, operation: String, holder: BlockingThread? = nil, note: String? = nil
    ) {
        self.kind = kind
        self.address = address
        self.operation = operation
        self.holder = holder
        self.note = note
    }
}

/// Another thread of the stalled process that the stalled thread waits on, as captured in the same stall.
public struct BlockingThread: Equatable, Sendable {
    public var tid: Int32
    /// `/proc/PID/task/TID/comm`, where readable.
    public var name: String?
    /// Its state just before its stack was taken: running, sleeping in `nanosleep`, blocked in a futex.
    public var state: ThreadState?
    /// Its stack, innermost first; empty where it could not be captured (see ``stackNote``).
    public var frames: [Frame]
    /// Why there is no stack, or why it is short.
    public var stackNote: String?
    /// What it waits for itself, where it is blocked too: the next link of the chain.
    public var blocker: Blocker?
    /// It is a thread met earlier in the chain (the stalled thread included): the chain is a cycle, a deadlock. Its
    /// stack is not repeated.
    public var closesCycle: Bool

    public init(
        tid: Int32, name: String?, state: ThreadState?, frames: [Frame] = [], stackNote: String? = nil,
        blocker: Blocker? = nil, closesCycle: Bool = false
    ) {
        self.tid = tid
        self.name = name
        self.state = state
        self.frames = frames
        self.stackNote = stackNote
        self.blocker = blocker
        self.closesCycle = closesCycle
    }

    /// `thread db-writer (tid 45)`.
    public var label: String { "thread \(name ?? "?") (tid \(tid))" }

    /// What it was doing, in a reader's words: "running", "sleeping in clock_nanosleep", "waiting on a lock (futex)".
    public var activity: String {
        guard let state else { return "state unknown" }
        if state.isRunning { return "running" }
        let call = state.waitingCall
        switch state.waitReason {
        case .sleep: return "sleeping" + (call.map { " in \($0)" } ?? "")
        case .lock: return "blocked on a lock" + (call.map { " (\($0))" } ?? "")
        case .io: return "waiting for I/O" + (call.map { " in \($0)" } ?? "")
        case .child: return "waiting for a child process" + (call.map { " in \($0)" } ?? "")
        case .other, nil: return "blocked" + (call.map { " in \($0)" } ?? " in the kernel")
        }
    }
}

/// A thread waiting for a child process: which one, and what the children were doing.
public struct ChildWait: Equatable, Sendable {
    /// What the wait asked for: one child, any child, or any child of a process group.
    public enum Target: Equatable, Sendable {
        case child(Int32)
        case anyChild
        /// Any child in a process group; 0 for the waiting process's own group.
        case processGroup(Int32)
        /// The child a pidfd names (`waitid(P_PIDFD, …)`), when its pid could not be read from the descriptor.
        case pidDescriptor(Int32)
    }

    public var target: Target
    /// The system call (`wait4`, `waitid`).
    public var call: String
    /// The awaited child, or every child for a wait on any (at most ``ChildWait/maximumListed``).
    public var children: [ChildProcess]
    /// What is unknown or odd (no such child, more children than listed).
    public var note: String?

    public init(target: Target, call: String, children: [ChildProcess], note: String? = nil) {
        self.target = target
        self.call = call
        self.children = children
        self.note = note
    }

    /// Children listed at most for a wait on any child.
    public static let maximumListed = 16

    /// `child pid 120`, `any child`, `any child in process group 7`.
    public var targetPhrase: String {
        switch target {
        case .child(let pid): "child pid \(pid)"
        case .anyChild: "any child"
        case .processGroup(let group):
            group == 0 ? "any child in its own process group" : "any child in process group \(group)"
        case .pidDescriptor(let descriptor): "the child pidfd \(descriptor) names"
        }
    }
}

/// A child process of the stalled one, read from `/proc/PID`.
public struct ChildProcess: Equatable, Sendable {
    public var pid: Int32
    /// `/proc/PID/comm`.
    public var name: String?
    /// `/proc/PID/cmdline`, arguments joined by spaces, cut at ``ChildProcess/maximumCommandLength`` characters.
    public var commandLine: String?
    /// Its main thread's state, system call and wait channel.
    public var state: ThreadState?

    public init(pid: Int32, name: String?, commandLine: String?, state: ThreadState?) {
        self.pid = pid
        self.name = name
        self.commandLine = commandLine
        self.state = state
    }

    public static let maximumCommandLength = 256

    /// What it was doing: "sleeping in clock_nanosleep", "running", "a zombie (exited, not yet reaped)".
    public var activity: String {
        guard let state else { return "state unknown" }
        if state.state == "Z" { return "a zombie (exited, not yet reaped)" }
        return BlockingThread(tid: pid, name: name, state: state).activity
    }
}

extension Blocker {
    /// One line for headlines, JUnit messages and the summary: "waiting on a mutex held by thread db-writer (tid 45),
    /// sleeping in clock_nanosleep", "waiting for child pid 120 (sleep), sleeping in clock_nanosleep".
    public var summary: String {
        switch self {
        case .lock(let wait):
            let lock = "waiting on a \(wait.kind.phrase) (0x\(String(wait.address, radix: 16)))"
            guard let holder = wait.holder else { return lock + (wait.kind.hasOwner ? ", owner unknown" : "") }
            if wait.kind == .threadJoin { return "waiting for \(holder.label) to exit, \(holder.activity)" }
            if holder.closesCycle || closesCycle { return lock + " held by \(holder.label): a deadlock" }
            if let root = rootHolder, root.tid != holder.tid {
                return lock + " held by \(holder.label), which waits on \(root.label), \(root.activity)"
            }
            return lock + " held by \(holder.label), \(holder.activity)"
        case .child(let wait):
            guard wait.children.count == 1, let child = wait.children.first else {
                let count = wait.children.count
                return "waiting for \(wait.targetPhrase) (\(count) child\(count == 1 ? "" : "ren"))"
            }
            let name = (child.commandLine ?? child.name).map { " (\($0.prefix(60)))" } ?? ""
            return "waiting for \(wait.targetPhrase == "any child" ? "any child: " : "")child pid \(child.pid)\(name),"
                + " \(child.activity)"
        case .descriptor(let wait):
            return wait.summary
        }
    }

    /// Whether the chain of lock holders comes back to a thread already in it: a deadlock.
    public var closesCycle: Bool {
        guard case .lock(let wait) = self, let holder = wait.holder else { return false }
        return holder.closesCycle || holder.blocker?.closesCycle == true
    }

    /// The thread at the end of the chain of lock holders: the one the others wait for (itself running, sleeping or
    /// blocked on something else); nil when no holder is named or the chain is a cycle.
    public var rootHolder: BlockingThread? {
        guard case .lock(let wait) = self, var holder = wait.holder, !holder.closesCycle else { return nil }
        while case .lock(let next) = holder.blocker, let further = next.holder {
            if further.closesCycle { return nil }
            holder = further
        }
        return holder
    }
}
