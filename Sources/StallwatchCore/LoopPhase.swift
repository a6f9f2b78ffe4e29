// Where the watched run loop is, as published by the agent's observers. The numbers are the loop model's, in C.
import CStallwatchLoopModel

/// The main run loop's position in its cycle, as last published by the agent's observers.
///
/// CoreFoundation reports activities; the agent maps them to phases with one extra distinction:
/// `beforeWaiting` is published twice, by an observer ordered first (other observers are about to run)
/// and by one ordered last (the loop is really about to sleep). A stall inside some other
/// `beforeWaiting` observer therefore shows up as `beforeWaiting`, which counts as busy.
///
/// Each case's number (its ``rawValue``, what a board publishes and a JSON record holds) is the C loop model's
/// `sw_loop_phase` of the same name (CStallwatchLoopModel's `sw_loop_phase.h`), the one definition both languages read.
public enum LoopPhase: Sendable, Codable, CaseIterable, RawRepresentable {
    /// Nothing published yet: the run loop has not run.
    case notStarted
    /// The loop was entered (`kCFRunLoopEntry`).
    case entry
    /// About to run version-0 sources (`kCFRunLoopBeforeSources`): sources, blocks, main-queue work follow.
    case beforeSources
    /// `kCFRunLoopBeforeWaiting` observers are running (published by the first observer).
    case beforeWaiting
    /// Asleep, waiting for work (published by the last `beforeWaiting` observer).
    case sleeping
    /// Woken up (`kCFRunLoopAfterWaiting`): timers, main-queue blocks or ports are being handled.
    case afterWaiting
    /// The loop returned to its caller (`kCFRunLoopExit`).
    case exit
    /// No run loop: a main-queue ping went unanswered (a `dispatchMain()` or main-actor program).
    case mainQueue
    /// The thread left its outermost run loop after running it: a program that pumps the loop itself
    /// (`while running { RunLoop.current.run(mode:before:) }`) is working between two of its calls. Busy: no
    /// timer or source of the loop can run until the thread comes back (see ``RunLoopNesting``).
    case outsideLoop
    /// Running a Swift concurrency job on an executor thread (`--thread`): a task's run from one suspension point to
    /// the next, which a task that blocks its thread never ends. Published by the agent at each job's start; the
    /// job's end publishes `sleeping` (the thread is free for the next job).
    case task

    /// The C model's phase of the same name.
    @inlinable @usableFromInline
    var model: sw_loop_phase {
        switch self {
        case .notStarted: .notStarted
        case .entry: .entry
        case .beforeSources: .beforeSources
        case .beforeWaiting: .beforeWaiting
        case .sleeping: .sleeping
        case .afterWaiting: .afterWaiting
        case .exit: .exit
        case .mainQueue: .mainQueue
        case .outsideLoop: .outsideLoop
        case .task: .task
        }
    }

    @inlinable @usableFromInline
    init(model: sw_loop_phase) {
        switch model {
        case .notStarted: self = .notStarted
        case .entry: self = .entry
        case .beforeSources: self = .beforeSources
        case .beforeWaiting: self = .beforeWaiting
        case .sleeping: self = .sleeping
        case .afterWaiting: self = .afterWaiting
        case .exit: self = .exit
        case .mainQueue: self = .mainQueue
        case .outsideLoop: self = .outsideLoop
        case .task: self = .task
        }
    }

    /// The phase's number, as the agent publishes it.
    @inlinable
    public var rawValue: UInt8 { model.rawValue }

    /// The phase numbered `rawValue`; nil for a number the model does not define.
    @inlinable
    public init?(rawValue: UInt8) {
        // An imported C enum takes any number as its raw value: the model says which are phases.
        guard sw_phase_is_defined(rawValue) != 0, let model = sw_loop_phase(rawValue: rawValue) else { return nil }
        self.init(model: model)
    }

    /// Whether a timeout in this phase counts toward a stall.
    ///
    /// The classic detector counts `afterWaiting` and `beforeSources`. stallwatch also counts `entry` (the
    /// loop is between entry and its first sources) and `beforeWaiting` (another observer is running).
    /// `outsideLoop` counts too: the thread ran its loop and has not come back to it. An asleep loop and one that
    /// never ran never count (`exit` is no longer published: leaving a loop resumes the phase outside it).
    ///
    /// The rule is the C model's busy mask (`SW_BUSY_PHASES`), which the agent's board also reads to begin a busy
    /// period.
    public var isBusy: Bool { sw_phase_is_busy(rawValue) != 0 }

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
