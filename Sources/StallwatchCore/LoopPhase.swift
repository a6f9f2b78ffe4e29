// Where the watched run loop is, as published by the agent's observers.

/// The main run loop's position in its cycle, as last published by the agent's observers.
///
/// CoreFoundation reports activities; the agent maps them to phases with one extra distinction:
/// `beforeWaiting` is published twice, by an observer ordered first (other observers are about to run)
/// and by one ordered last (the loop is really about to sleep). A stall inside some other
/// `beforeWaiting` observer therefore shows up as `beforeWaiting`, which counts as busy.
public enum LoopPhase: UInt8, Sendable, Codable, CaseIterable {
    /// Nothing published yet: the run loop has not run.
    case notStarted = 0
    /// The loop was entered (`kCFRunLoopEntry`).
    case entry = 1
    /// About to run version-0 sources (`kCFRunLoopBeforeSources`): sources, blocks, main-queue work follow.
    case beforeSources = 2
    /// `kCFRunLoopBeforeWaiting` observers are running (published by the first observer).
    case beforeWaiting = 3
    /// Asleep, waiting for work (published by the last `beforeWaiting` observer).
    case sleeping = 4
    /// Woken up (`kCFRunLoopAfterWaiting`): timers, main-queue blocks or ports are being handled.
    case afterWaiting = 5
    /// The loop returned to its caller (`kCFRunLoopExit`).
    case exit = 6
    /// No run loop: a main-queue ping went unanswered (a `dispatchMain()` or main-actor program).
    case mainQueue = 7
    /// The thread left its outermost run loop after running it: a program that pumps the loop itself
    /// (`while running { RunLoop.current.run(mode:before:) }`) is working between two of its calls. Busy: no
    /// timer or source of the loop can run until the thread comes back (see ``RunLoopNesting``).
    case outsideLoop = 8
    /// Running a Swift concurrency job on an executor thread (`--thread`): a task's run from one suspension point to
    /// the next, which a task that blocks its thread never ends. Published by the agent at each job's start; the
    /// job's end publishes `sleeping` (the thread is free for the next job).
    case task = 9

    /// Whether a timeout in this phase counts toward a stall.
    ///
    /// The classic detector counts `afterWaiting` and `beforeSources`. stallwatch also counts `entry` (the
    /// loop is between entry and its first sources) and `beforeWaiting` (another observer is running).
    /// `outsideLoop` counts too: the thread ran its loop and has not come back to it. An asleep loop and one that
    /// never ran never count (`exit` is no longer published: leaving a loop resumes the phase outside it).
    public var isBusy: Bool {
        switch self {
        case .entry, .beforeSources, .beforeWaiting, .afterWaiting, .mainQueue, .outsideLoop, .task: true
        case .notStarted, .sleeping, .exit: false
        }
    }

    /// Whether this is time outside the thread's outermost run loop (see ``StallReport/isOutsideLoop``).
    public var isOutsideLoop: Bool { self == .outsideLoop }

    /// The name used in reports, matching CoreFoundation's activity names.
    public var name: String {
        switch self {
        case .notStarted: "notStarted"
        case .entry: "entry"
        case .beforeSources: "beforeSources"
        case .beforeWaiting: "beforeWaiting"
        case .sleeping: "sleeping"
        case .afterWaiting: "afterWaiting"
        case .exit: "exit"
        case .mainQueue: "mainQueue"
        case .outsideLoop: "outsideLoop"
        case .task: "task"
        }
    }

    /// What the main thread can be doing while the loop sits in this phase, for people reading a report.
    public var explanation: String {
        switch self {
        case .notStarted: "the run loop had not started"
        case .entry: "entering the run loop (observers of entry or beforeTimers)"
        case .beforeSources: "running version-0 sources, blocks or main-queue work"
        case .beforeWaiting: "inside a beforeWaiting observer"
        case .sleeping: "asleep"
        case .afterWaiting: "handling a timer, main-queue block or port after waking"
        case .exit: "outside the run loop"
        case .mainQueue: "a main-queue block, in a program with no run loop (dispatchMain or the main actor)"
        case .outsideLoop: "between run-loop calls: the thread pumps its loop itself and had not come back to it"
        case .task: "running a Swift task on a concurrency executor thread, from one await to the next"
        }
    }

    public init?(name: String) {
        guard let phase = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = phase
    }
}
