// Run loops on threads other than the main one (`--thread`): found when each thread first runs its loop, given the
// same two observers as the main loop, read by the one watcher thread, and dropped when the thread exits.
import CStallwatchAgentSupport
import CoreFoundation
import Foundation
import StallwatchCore
import Synchronization

/// One loop thread: the board its observers publish to, as the main loop's do to ``ActivityBoard/shared``.
final class LoopThread: WatchedThread, @unchecked Sendable {
    let tid: Int32
    let board = ActivityBoard(keepsBusyPeriods: false)
    /// When the thread exited (its thread-exit destructor ran), `CLOCK_MONOTONIC` ns; 0 while it lives.
    let exitedAt = Atomic<UInt64>(0)
    /// The thread's loop, kept alive for a candidate's observers to be added later.
    fileprivate let loop: CFRunLoop
    /// When the thread first ran its loop.
    fileprivate let offeredAt: UInt64
    /// The loop thread's own state: where it is among nested loops. Its modes are not named (mode 0): only the main
    /// loop's are tracked.
    fileprivate var nesting = RunLoopNesting()
    /// The observers once it is watched; empty for a candidate (under ``LoopThreads``' lock).
    fileprivate var observers: [CFRunLoopObserver] = []

    fileprivate init(tid: Int32, loop: CFRunLoop, now: UInt64) {
        self.tid = tid
        self.loop = loop
        offeredAt = now
    }

    func exitTime() -> UInt64 { exitedAt.load(ordering: .acquiring) }

    func forget() { LoopThreads.remove(self) }

    @inline(__always)
    fileprivate func publish(_ activity: RunLoopNesting.Activity, precise: Bool) {
        board.publish(nesting.apply(activity).phase, precise: precise)
    }
}

/// The loop threads the selectors pick, for the watcher.
enum LoopThreads {
    /// Most loop threads watched at once: beyond, a thread's loop goes unwatched (its samples would crowd the
    /// watcher's wakes anyway).
    static let capacity = 256
    private static let selectors = PthreadLocked<[ThreadSelector]>([])
    private static let watched = PthreadLocked<[LoopThread]>([])

    /// How long a loop thread whose name no selector matches stays a candidate: a thread named with Foundation's
    /// `Thread.name`, or after its loop started, takes its name a moment after its first run.
    static let candidateWindow: UInt64 = 5_000_000_000

    /// Watches, from now on, the run loop of every thread `selectors` pick, other than the main thread (whose loop
    /// has its own observers). Nothing to do for `main` alone.
    static func watch(_ selectors: [ThreadSelector]) {
        let others = selectors.filter { $0 != .main }
        guard !others.isEmpty else { return }
        self.selectors.withLock { $0 = others }
        sw_agent_set_loop_thread_hooks(loopThreadStarted, loopThreadExiting)
    }

    /// Stops watching loop threads: their observers go, and a thread that runs its loop later is left alone.
    static func stop() {
        selectors.withLock { $0 = [] }
        watched.withLock { threads in
            // Invalidating locks the thread's loop, from this thread: safe while it runs, and it stops publishing.
            for thread in threads where thread.exitedAt.load(ordering: .acquiring) == 0 {
                for observer in thread.observers { CFRunLoopObserverInvalidate(observer) }
            }
            threads.removeAll()
        }
    }

    /// The loop threads watched now (candidates not yet picked are left out).
    static func current() -> [LoopThread] { watched.withLock { $0.filter { !$0.observers.isEmpty } } }

    /// Forgets a thread that exited.
    static func remove(_ thread: LoopThread) {
        watched.withLock { threads in threads.removeAll { $0 === thread } }
    }

    /// On the watcher's thread: candidates whose name a selector now matches get their observers (their loop is woken
    /// so that it publishes at once); those past ``candidateWindow`` are dropped.
    static func pickCandidates(now: UInt64) {
        let chosen = selectors.withLock { $0 }
        let pid = getpid()
        watched.withLock { threads in
            threads.removeAll { $0.observers.isEmpty && now > $0.offeredAt + candidateWindow }
            for thread in threads where thread.observers.isEmpty && thread.exitedAt.load(ordering: .acquiring) == 0 {
                guard let name = ThreadInspector.name(pid: pid, tid: thread.tid),
                    picks(chosen, tid: thread.tid, name: name, pid: pid)
                else { continue }
                thread.observers = RunLoopObservers.install(on: thread.loop, for: thread)
                CFRunLoopWakeUp(thread.loop)
            }
        }
    }

    /// Whether `selectors` pick a thread: `all` means the program's loops, not the agent's own threads.
    private static func picks(_ selectors: [ThreadSelector], tid: Int32, name: String, pid: Int32) -> Bool {
        let picking = selectors.filter { $0.matches(tid: tid, name: name, pid: pid) }
        return !picking.isEmpty && (!AgentThreadNames.all.contains(name) || picking.contains { $0 != .all })
    }

    /// On the loop thread, before its first run: watched at once if picked (its observers then see its entry), kept
    /// as a candidate if a name glob may pick it once it has its name, else left alone.
    fileprivate static func started(loop: CFRunLoop) -> LoopThread? {
        let pid = getpid()
        let tid = sw_agent_gettid()
        let name = ThreadInspector.name(pid: pid, tid: tid) ?? ""
        let chosen = selectors.withLock { $0 }
        let picked = picks(chosen, tid: tid, name: name, pid: pid)
        guard picked || chosen.contains(where: { if case .name = $0 { true } else { false } }) else { return nil }
        let thread = LoopThread(tid: tid, loop: loop, now: sw_agent_now_ns())
        let admitted = watched.withLock { threads -> Bool in
            guard threads.count < capacity else { return false }
            if picked { thread.observers = RunLoopObservers.install(on: loop, for: thread) }
            threads.append(thread)
            return true
        }
        return admitted ? thread : nil
    }
}

/// `sw_loop_thread_started_fn`: the thread, retained until it exits, or nil.
private func loopThreadStarted(_ loop: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let loop, let thread = LoopThreads.started(loop: unsafeBitCast(loop, to: CFRunLoop.self)) else { return nil }
    return Unmanaged.passRetained(thread).toOpaque()
}

/// `sw_loop_thread_exiting_fn`: the watcher ends the thread's stall, if any, and forgets it.
private func loopThreadExiting(_ watched: UnsafeMutableRawPointer?) {
    guard let watched else { return }
    let thread = Unmanaged<LoopThread>.fromOpaque(watched).takeRetainedValue()
    thread.exitedAt.store(sw_agent_now_ns(), ordering: .releasing)
}

extension RunLoopObservers {
    /// Adds both observers to another thread's run loop (`loop`, run by the calling thread), publishing to `thread`.
    static func install(on loop: CFRunLoop, for thread: LoopThread) -> [CFRunLoopObserver] {
        var context = CFRunLoopObserverContext(
            version: 0, info: Unmanaged.passUnretained(thread).toOpaque(), retain: nil, release: nil,
            copyDescription: nil)
        var observers: [CFRunLoopObserver] = []
        if let first = CFRunLoopObserverCreate(
            nil, loopThreadFirstActivities.rawValue, true, CFIndex.min, publishLoopThreadFirst, &context)
        {
            observers.append(first)
        }
        if let last = CFRunLoopObserverCreate(
            nil, lastActivities.rawValue, true, CFIndex.max, publishLoopThreadLast, &context)
        {
            observers.append(last)
        }
        for observer in observers { CFRunLoopAddObserver(loop, observer, kCFRunLoopCommonModes) }
        return observers
    }
}

private func publishLoopThreadFirst(
    _: CFRunLoopObserver?, _ activity: CFRunLoopActivity, _ info: UnsafeMutableRawPointer?
) {
    publishLoopThread(activity, lastObserver: false, info)
}

private func publishLoopThreadLast(
    _: CFRunLoopObserver?, _ activity: CFRunLoopActivity, _ info: UnsafeMutableRawPointer?
) {
    publishLoopThread(activity, lastObserver: true, info)
}

/// What an observer heard, by the loop model's table of CoreFoundation's activities (as the main loop's C observers
/// read it).
@inline(__always)
private func publishLoopThread(_ activity: CFRunLoopActivity, lastObserver: Bool, _ info: UnsafeMutableRawPointer?) {
    guard let info, let heard = RunLoopNesting.Activity(coreFoundation: activity.rawValue, lastObserver: lastObserver)
    else { return }
    // The thread object outlives its observers (retained until the thread exits): no retain and release per call.
    Unmanaged<LoopThread>.fromOpaque(info)._withUnsafeGuaranteedRef { $0.publish(heard, precise: heard.isPrecise) }
}

/// A value behind a pthread mutex (`NSLock`), for the state loop threads and the watcher share: the thread sanitizer
/// sees a pthread mutex order its users, and does not see `Synchronization.Mutex` (whose lock lives in the
/// uninstrumented library), so it took every access under that lock for a race.
final class PthreadLocked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
