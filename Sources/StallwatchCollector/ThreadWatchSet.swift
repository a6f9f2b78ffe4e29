// The threads of one process that `--thread` picks and stallwatch watches from /proc: found again as threads come and
// go, each judged by its own external watcher.
import StallwatchCore

/// One thread watched from outside: sampled from `/proc` (``ExternalWatcher``) or followed by the kernel trace
/// (``TracedWatcher``).
protocol OutsideWatcher: AnyObject {
    var tid: Int32 { get }
    var nextWake: UInt64 { get }
    /// Whether the thread was seen waiting in an event loop (only then are its readings judged).
    var isEventLoop: Bool { get }
    var notWatchedReason: String { get }
    /// How its stalls were seen.
    var mode: WatchMode { get }
    /// Takes the reading due at `now` (a traced thread's from `reading`); nil once the thread is gone.
    func step(now: UInt64, reading: KernelReading) -> [AgentMessage]?
    func gone(at now: UInt64) -> [AgentMessage]
}

extension ExternalWatcher: OutsideWatcher {
    var isEventLoop: Bool { evidence.isEventLoop }
    var notWatchedReason: String { evidence.notWatchedReason }
    var mode: WatchMode { .external }
    func step(now: UInt64, reading: KernelReading) -> [AgentMessage]? { step(now: now) }
}

extension TracedWatcher: OutsideWatcher {
    var mode: WatchMode { .kernel }
}

/// Watches from outside every thread of a process that the selectors pick and nobody else watches: through the
/// kernel trace when there is one, else from `/proc`.
///
/// The task directory is read again every ``scanInterval`` (or every threshold, if longer), so a loop thread started
/// later, or a pool that grows, is picked up within it; a thread's name is read again until it matches, because a new
/// thread carries its creator's name until it names itself. A thread that exits is dropped, and a stall it was in
/// ends when it was last seen.
final class ThreadWatchSet {
    /// A thread picked but not watched as an event loop, and why: for the summary.
    struct Unwatched: Equatable {
        var tid: Int32
        var name: String
        var reason: String
    }

    let pid: Int32
    private var selectors: [ThreadSelector]
    private let settings: WatchSettings
    private let identifiers: StallIdentifiers
    /// Threads watched otherwise (the agent's run loops): never watched here.
    private var excluded: Set<Int32>
    private var watchers: [Int32: any OutsideWatcher] = [:] {
        didSet {
            watchedInOrder = nil
            earliestWatcherWake = nil
        }
    }
    /// The watched tids in ascending order, kept until the set changes: a step goes through thousands of idle loops
    /// many times a second, and sorting them each time was a measurable share of the collector's CPU.
    private var watchedInOrder: [Int32]?
    /// The earliest wake of any watcher, as the last step left them (nil: to be computed).
    private var earliestWatcherWake: UInt64?
    /// The kernel trace the threads are followed by; nil samples `/proc`.
    private let trace: KernelTrace?
    /// Every thread seen, by tid, with its name as last read.
    private(set) var names: [Int32: String] = [:]
    /// The first threads that exited before they proved to be loops, and why they were not: named one by one.
    private var departed: [Unwatched] = []
    /// How many threads exited before they proved to be loops, and how many of them had each name (at most
    /// ``departedNamesKept`` names: a pool that churns threads names them alike, a hostile program may not).
    private(set) var departedCount = 0
    private var departedNames: [String: Int] = [:]
    /// Beyond this many, threads that exited unwatched are counted, not named one by one.
    static let departedNamed = 3
    static let departedNamesKept = 64
    /// Selectors that picked a thread at some point.
    private var matched: Set<ThreadSelector> = []
    private var nextScan: UInt64
    private let createdAt: UInt64

    /// - Parameters:
    ///   - excluding: threads someone else watches, such as the main thread when the agent watches its run loop.
    ///   - identifiers: the process's stall numbers.
    init(
        pid: Int32, selectors: [ThreadSelector], settings: WatchSettings, excluding: Set<Int32> = [],
        identifiers: StallIdentifiers = StallIdentifiers(), trace: KernelTrace? = nil, now: UInt64
    ) {
        self.pid = pid
        self.trace = trace
        self.selectors = selectors
        self.settings = settings
        self.identifiers = identifiers
        excluded = excluding
        nextScan = now
        createdAt = now
    }

    /// When the set must run next.
    var nextWake: UInt64 {
        let earliest = earliestWatcherWake ?? watchers.values.lazy.map(\.nextWake).min() ?? .max
        earliestWatcherWake = earliest
        return min(earliest, nextScan)
    }

    private var orderedTids: [Int32] {
        if let watchedInOrder { return watchedInOrder }
        let sorted = watchers.keys.sorted()
        watchedInOrder = sorted
        return sorted
    }

    /// Selectors that have matched no thread so far.
    var unmatchedSelectors: [ThreadSelector] {
        selectors.filter { !matched.contains($0) && !(searchingLoops && $0 == .all) }
    }

    /// How often the task list is read again, at the least (a longer threshold reads it every threshold): a thread
    /// that appears is picked up within it.
    static let scanInterval: UInt64 = 250_000_000

    /// From this many threads watched, the task list is read again only when the process's thread count changed, or
    /// every ``fullScanInterval``: reading 5,000 entries four times a second was an eighth of the collector's CPU.
    static let manyThreads = 1000
    static let fullScanInterval: UInt64 = 2_000_000_000
    private var lastThreadCount: Int?
    private var lastFullScan: UInt64 = 0

    /// How long a selector may match nothing before the user is told: a program starts its loop threads during its
    /// set-up, and a new thread takes its name a moment after it starts.
    static let matchGrace: UInt64 = 1_000_000_000

    /// Selectors that have matched nothing for the grace period.
    func unmatchedSelectors(at now: UInt64) -> [ThreadSelector] {
        now >= createdAt + Self.matchGrace ? unmatchedSelectors : []
    }

    /// Threads picked that never proved to be event loops, and why: those still running, and the first few that
    /// exited (more are counted in ``departedCount``).
    var unwatched: [Unwatched] {
        let current = watchers.values.filter { !$0.isEventLoop }.sorted { $0.tid < $1.tid }.map {
            Unwatched(tid: $0.tid, name: names[$0.tid] ?? "?", reason: $0.notWatchedReason)
        }
        return (departedCount > Self.departedNamed ? [] : departed) + current
    }

    /// What the summary says of the threads picked that were never watched: one sentence per thread still running
    /// and per thread that exited, or, when more than ``departedNamed`` exited (a pool that churns short-lived
    /// threads), one sentence counting those.
    var unwatchedNotes: [String] {
        // Looking for a process's loops itself, stallwatch says which it found; the threads that were none are no news,
        // but for those a selector named (the main thread, from outside).
        var notes = unwatched.filter { !searchingLoops || pickedByName($0) }.map {
            "thread \($0.name) (tid \($0.tid)) of pid \(pid) not watched: \($0.reason)"
        }
        guard departedCount > Self.departedNamed, !searchingLoops else { return notes }
        let common = departedNames.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(3)
        let named = common.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        notes.insert(
            "\(departedCount) threads of pid \(pid) exited before they could be watched (picked by --thread, never"
                + " seen waiting in an event loop while they ran; named \(named)\(departedNames.count > 3 ? ", …" : ""))",
            at: 0)
        return notes
    }

    /// Whether a selector other than `all` picks the thread.
    private func pickedByName(_ thread: Unwatched) -> Bool {
        selectors.contains { $0 != .all && $0.matches(tid: thread.tid, name: thread.name, pid: pid) }
    }

    /// Watches every thread that proves an event loop from now on, besides those picked so far.
    func addAllThreads() {
        if !selectors.contains(.all) { selectors.append(.all) }
        searchingLoops = true
        nextScan = 0
    }

    /// Whether `tid` is watched here and proved an event loop.
    func watchesLoop(tid: Int32) -> Bool {
        watchers[tid]?.isEventLoop == true
    }

    /// Whether the set looks for the process's event loops itself (no `--thread` asked for them).
    private(set) var searchingLoops = false

    /// How `tid`'s stalls are seen: through the kernel trace or from `/proc`.
    func mode(of tid: Int32) -> WatchMode {
        watchers[tid]?.mode ?? (trace == nil ? .external : .kernel)
    }

    /// Stops watching `tid` here: someone else (the agent) watches it from now on. A stall this watch had found on
    /// it ends now.
    func exclude(_ tid: Int32, now: UInt64) -> [AgentMessage] {
        excluded.insert(tid)
        guard let watcher = watchers.removeValue(forKey: tid) else { return [] }
        matched.formUnion(selectors.filter { $0.matches(tid: tid, name: names[tid], pid: pid) })
        return watcher.gone(at: now)
    }

    /// Watches `tid` here after all: nobody else does (the agent said it watches nothing in this program). It is
    /// picked at the next look at the thread list if the selectors pick it.
    func include(_ tid: Int32) {
        guard excluded.remove(tid) != nil else { return }
        nextScan = 0
    }

    /// Runs what is due at `now`: a new look at the thread list, and the samples due.
    func step(now: UInt64) -> [AgentMessage] {
        // The process is gone (or a zombie, not yet reaped): its stalls stay unfinished, as the watch's end leaves
        // them; only a thread that exits while its process lives ends its stall.
        guard let fields = ThreadInspector.statFields(pid: pid, tid: pid), let state = fields.first, state != "Z",
            state != "X"
        else {
            return []
        }
        var messages: [AgentMessage] = []
        if now >= nextScan {
            nextScan = now + max(settings.thresholdNanoseconds, Self.scanInterval)
            // `num_threads` (field 20): a process of thousands of threads whose count has not changed reads its
            // task list only every ``fullScanInterval`` (a thread that exits as another starts is seen then).
            let threadCount = fields.count > 17 ? Int(fields[17]) : nil
            if watchers.count < Self.manyThreads || threadCount == nil || threadCount != lastThreadCount
                || now >= lastFullScan + Self.fullScanInterval
            {
                lastThreadCount = threadCount
                lastFullScan = now
                messages += scan(now: now)
            }
        }
        // The kernel's records of every followed thread, in one read, the first time a traced thread is due.
        let reading = KernelReading(trace)
        var earliest = UInt64.max
        for tid in orderedTids {
            guard let watcher = watchers[tid] else { continue }
            guard now >= watcher.nextWake else {
                earliest = min(earliest, watcher.nextWake)
                continue
            }
            if let observed = watcher.step(now: now, reading: reading) {
                if observed.contains(where: { if case .watching = $0 { true } else { false } }), isAgentThread(tid) {
                    // The agent's own thread, picked by `all` before it had named itself: stallwatch's, not a loop
                    // of the program's.
                    watchers[tid] = nil
                    excluded.insert(tid)
                    continue
                }
                earliest = min(earliest, watcher.nextWake)
                messages += observed
            } else {
                messages += depart(tid, now: now)
            }
        }
        earliestWatcherWake = earliest
        return messages
    }

    /// At the watch's end, once the process is known to have let its threads exit on their own: the stall of a
    /// thread that is gone ended when it exited (when it was last seen), and is not left unfinished.
    func endExitedThreads(now: UInt64) -> [AgentMessage] {
        watchers.keys.sorted().filter { ThreadInspector.statFields(pid: pid, tid: $0) == nil }.flatMap {
            depart($0, now: now)
        }
    }

    /// Reads the thread list: new threads that match get a watcher, gone ones lose theirs.
    private func scan(now: UInt64) -> [AgentMessage] {
        let tids = ThreadInspector.threads(pid: pid)
        guard !tids.isEmpty else { return [] }
        let present = Set(tids)
        var messages: [AgentMessage] = []
        for tid in watchers.keys.sorted() where !present.contains(tid) {
            messages += depart(tid, now: now)
        }
        for tid in tids where watchers[tid] == nil && !excluded.contains(tid) {
            guard let name = ThreadInspector.name(pid: pid, tid: tid) else { continue }
            names[tid] = name
            let picking = selectors.filter { $0.matches(tid: tid, name: name, pid: pid) }
            guard !picking.isEmpty else { continue }
            // `all` means the program's loops: the agent's own threads are stallwatch's, not the program's.
            if AgentThreadNames.all.contains(name), !picking.contains(where: { $0 != .all }) { continue }
            matched.formUnion(picking)
            if let trace {
                let traced = TracedWatcher(
                    pid: pid, tid: tid, trace: trace, threshold: settings.thresholdNanoseconds, count: settings.count,
                    maxSamples: settings.maxSamples, now: now, identifiers: identifiers)
                if traced.followed {
                    watchers[tid] = traced
                    continue
                }
            }
            watchers[tid] = ExternalWatcher(
                pid: pid, tid: tid, threshold: settings.thresholdNanoseconds, count: settings.count,
                maxSamples: settings.maxSamples, now: now, identifiers: identifiers)
        }
        return messages
    }

    /// Whether `tid` is one of the agent's threads, which only a selector naming it (or its tid) picks.
    private func isAgentThread(_ tid: Int32) -> Bool {
        guard let name = ThreadInspector.name(pid: pid, tid: tid), AgentThreadNames.all.contains(name) else {
            return false
        }
        names[tid] = name
        return !selectors.contains { $0 != .all && $0.matches(tid: tid, name: name, pid: pid) }
    }

    /// Drops the watcher of a thread that is gone (or a process that is).
    private func depart(_ tid: Int32, now: UInt64) -> [AgentMessage] {
        guard let watcher = watchers.removeValue(forKey: tid) else { return [] }
        if !watcher.isEventLoop {
            let name = names[tid] ?? "?"
            departedCount += 1
            if departed.count < Self.departedNamed + 1 {
                departed.append(Unwatched(tid: tid, name: name, reason: watcher.notWatchedReason))
            }
            if departedNames[name] != nil || departedNames.count < Self.departedNamesKept {
                departedNames[name, default: 0] += 1
            }
        }
        return watcher.gone(at: now)
    }
}
