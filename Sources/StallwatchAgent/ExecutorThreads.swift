// Threads of Swift concurrency's global executor (`--thread`): found when each runs its first job, each job published
// as a busy stretch to a board of the thread's own, read by the one watcher thread, and dropped when the thread exits.
import CStallwatchAgentSupport
import Glibc
import StallwatchCore
import Synchronization

/// One executor thread: a job begins and ends on its board, as a run loop's observers publish on theirs.
///
/// A job is a task's run from one suspension point to the next. One that runs longer than the rule allows is a task
/// that blocks its executor thread (a lock, a sleep, I/O, long computing): the stall on such a thread. Between jobs the
/// thread is at rest, however briefly, so back-to-back jobs never add up to a stall.
final class ExecutorThread: WatchedThread, @unchecked Sendable {
    let tid: Int32
    let board = ActivityBoard(keepsBusyPeriods: false)
    private let exitedAt = Atomic<UInt64>(0)

    fileprivate init(tid: Int32) {
        self.tid = tid
    }

    func exitTime() -> UInt64 { exitedAt.load(ordering: .acquiring) }

    func forget() { ExecutorThreads.remove(self) }

    fileprivate func exited(at time: UInt64) { exitedAt.store(time, ordering: .releasing) }
}

/// The executor threads the selectors pick, for the watcher.
enum ExecutorThreads {
    /// Most executor threads watched at once: libdispatch's pool is bounded well below this.
    static let capacity = 256
    private static let selectors = PthreadLocked<[ThreadSelector]>([])
    private static let watched = PthreadLocked<[ExecutorThread]>([])

    /// Watches, from now on, the jobs of every executor thread `selectors` pick; nothing for `main` alone (the main
    /// actor's jobs run in the main loop or main queue, watched there).
    static func watch(_ selectors: [ThreadSelector]) {
        let others = selectors.filter { $0 != .main }
        guard !others.isEmpty else { return }
        self.selectors.withLock { $0 = others }
        sw_agent_set_executor_hooks(executorThreadStarted, executorJob, executorThreadExiting)
    }

    /// Stops watching: no thread is offered any more, and each watched one lets its watch go at its next job.
    static func stop() {
        sw_agent_stop_executor_hooks()
        selectors.withLock { $0 = [] }
        watched.withLock { $0.removeAll() }
    }

    /// The executor threads watched now.
    static func current() -> [ExecutorThread] { watched.withLock { $0 } }

    /// Forgets a thread that exited.
    static func remove(_ thread: ExecutorThread) {
        watched.withLock { threads in threads.removeAll { $0 === thread } }
    }

    /// On the executor thread, at its first job: watched if picked. libdispatch names its workers before they run
    /// anything (`com.apple.root.default-qos`, of which the kernel keeps the last 15 bytes: `oot.default-qos`), so
    /// the name a glob matches is there already.
    fileprivate static func started() -> ExecutorThread? {
        let pid = getpid()
        let tid = sw_agent_gettid()
        let name = ThreadInspector.name(pid: pid, tid: tid) ?? ""
        let chosen = selectors.withLock { $0 }
        let picking = chosen.filter { $0.matches(tid: tid, name: name, pid: pid) }
        guard !picking.isEmpty else { return nil }
        let thread = ExecutorThread(tid: tid)
        let admitted = watched.withLock { threads -> Bool in
            guard threads.count < capacity else { return false }
            threads.append(thread)
            return true
        }
        return admitted ? thread : nil
    }
}

/// `sw_executor_thread_started_fn`: the thread, retained until it exits, or nil.
private func executorThreadStarted() -> UnsafeMutableRawPointer? {
    guard let thread = ExecutorThreads.started() else { return nil }
    return Unmanaged.passRetained(thread).toOpaque()
}

/// `sw_executor_job_fn`: a job begins (busy, in phase `task`) or ends (at rest).
///
/// The start reads the precise clock: it is a stall's start. The end reads the coarse one (3 ns against 22 here): the
/// end of a job that is no stall is no one's concern, and that of a stall is timed precisely by the board's end
/// probe, which the watcher arms once it declares the stall.
private func executorJob(_ watched: UnsafeMutableRawPointer?, _ begins: Int32) {
    guard let watched else { return }
    Unmanaged<ExecutorThread>.fromOpaque(watched)._withUnsafeGuaranteedRef { thread in
        if begins != 0 {
            thread.board.publish(.task, precise: true)
        } else {
            thread.board.publish(.sleeping, precise: false)
        }
    }
}

/// `sw_executor_thread_exiting_fn`: the watcher ends the thread's stall, if any, and forgets it.
private func executorThreadExiting(_ watched: UnsafeMutableRawPointer?) {
    guard let watched else { return }
    Unmanaged<ExecutorThread>.fromOpaque(watched).takeRetainedValue().exited(at: sw_agent_now_ns())
}
