// A deadlock: threads each waiting on a lock the next one holds, found by following a stalled thread's chain of lock
// holders until it comes back to a thread already in it.

/// Threads of one process that wait on each other's locks: none of them can go on.
public struct DeadlockReport: Equatable, Sendable {
    /// One thread of the cycle: the lock it waits on, and the thread holding that lock (the next one in ``threads``).
    public struct Thread: Equatable, Sendable {
        public var tid: Int32
        public var name: String?
        public var state: ThreadState?
        /// Its stack when the deadlock was found, innermost first.
        public var frames: [Frame]
        public var lockKind: LockKind
        public var lockAddress: UInt64
        /// The tid of the thread holding the lock: the next thread of the cycle (the first, for the last).
        public var holder: Int32

        public init(
            tid: Int32, name: String?, state: ThreadState?, frames: [Frame], lockKind: LockKind, lockAddress: UInt64,
            holder: Int32
        ) {
            self.tid = tid
            self.name = name
            self.state = state
            self.frames = frames
            self.lockKind = lockKind
            self.lockAddress = lockAddress
            self.holder = holder
        }

        /// `thread main (tid 42)`.
        public var label: String { "thread \(name ?? "?") (tid \(tid))" }
    }

    public var pid: Int32
    public var processName: String
    /// When the cycle was found, `CLOCK_MONOTONIC` nanoseconds: at a capture of ``stallIdentifier``.
    public var detectedAt: UInt64
    /// The stall whose capture found it (its thread is in the cycle, or waits on one of its threads).
    public var stallIdentifier: Int
    /// The cycle, in the order its waits were followed.
    public var threads: [Thread]

    public init(pid: Int32, processName: String, detectedAt: UInt64, stallIdentifier: Int, threads: [Thread]) {
        self.pid = pid
        self.processName = processName
        self.detectedAt = detectedAt
        self.stallIdentifier = stallIdentifier
        self.threads = threads
    }

    /// The same deadlock however it is entered: its threads and the locks they wait on, sorted.
    public var key: [UInt64] {
        threads.map { UInt64(UInt32(bitPattern: $0.tid)) << 48 ^ $0.lockAddress }.sorted() + [UInt64(pid)]
    }

    /// The cycle the chain of `blocker` closes, if it closes one; `stalled` is the thread whose wait the chain
    /// starts from, with the stack of the same capture.
    public static func find(
        in blocker: Blocker?, stalled: BlockingThread, pid: Int32, processName: String, detectedAt: UInt64,
        stallIdentifier: Int
    ) -> DeadlockReport? {
        // Each waiting thread with the lock it waits on and who holds it, from the stalled thread outward.
        var links: [Thread] = []
        var waiter = stalled
        var next = blocker
        while case .lock(let wait) = next, let holder = wait.holder {
            links.append(
                Thread(
                    tid: waiter.tid, name: waiter.name, state: waiter.state, frames: waiter.frames,
                    lockKind: wait.kind, lockAddress: wait.address, holder: holder.tid))
            if holder.closesCycle {
                guard let start = links.firstIndex(where: { $0.tid == holder.tid }) else { return nil }
                return DeadlockReport(
                    pid: pid, processName: processName, detectedAt: detectedAt, stallIdentifier: stallIdentifier,
                    threads: Array(links[start...]))
            }
            waiter = holder
            next = holder.blocker
        }
        return nil
    }

    /// "thread main (tid 42) and thread worker (tid 43) wait on each other's locks", or for one thread "thread main
    /// (tid 42) waits on a mutex it holds itself".
    public var summary: String {
        guard threads.count > 1 else {
            let only = threads.first
            return "\(only?.label ?? "a thread") waits on a \(only?.lockKind.phrase ?? "lock") it holds itself"
        }
        let names = threads.map(\.label)
        let list = names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
        return "\(list) wait on each other's locks"
    }
}
