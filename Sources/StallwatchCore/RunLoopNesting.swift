// Which phase the main thread is in when run loops nest or are pumped by hand: entry pushes, exit pops.
import CStallwatchLoopModel

/// Turns the activities CoreFoundation reports into the phase to publish, across nested and pumped loops.
///
/// CoreFoundation reports `entry` and `exit` for every `CFRunLoopRunInMode` call, nested or not. A callout that
/// runs a nested loop (`RunLoop.main.run(mode:before:)` inside a timer) and keeps working when it returns is
/// still inside its callout: the outer loop is busy. So `entry` saves the phase the thread was in, and `exit`
/// restores it, with its mode; work after the nested loop returns is then judged as the outer callout it is.
///
/// Leaving the outermost loop gives ``LoopPhase/outsideLoop``: a thread that pumps its loop itself
/// (`while running { RunLoop.current.run(mode:before:) }`) is busy between its calls, since no timer or source
/// can run until it comes back. The rule for a thread that leaves its loop for good (its shutdown) is the
/// reporter's: a stall outside the loop counts only if the thread comes back to the loop (see
/// ``StallReport/isOutsideLoop``).
///
/// Entries can be missed: observers added to a mode after a loop in it started (a private mode the agent
/// discovers later, an agent started inside a callout or attached to a running program). ``resynchronize(mode:)``
/// repairs the stack from the mode the loop reports as current.
public struct RunLoopNesting: Sendable {
    /// What to publish: a phase and the mode of the loop it belongs to (0 for none or unknown).
    public struct State: Equatable, Sendable {
        public var phase: LoopPhase
        public var mode: UInt8

        @inlinable
        public init(phase: LoopPhase, mode: UInt8) {
            self.phase = phase
            self.mode = mode
        }
    }

    /// The CoreFoundation activities the agent observes, `sleeping` being the last `beforeWaiting` observer.
    public enum Activity: Sendable {
        case entry, beforeSources, beforeWaiting, sleeping, afterWaiting, exit

        /// The C model's activity of the same name.
        @inlinable @usableFromInline
        var model: sw_loop_activity {
            switch self {
            case .entry: .entry
            case .beforeSources: .beforeSources
            case .beforeWaiting: .beforeWaiting
            case .sleeping: .sleeping
            case .afterWaiting: .afterWaiting
            case .exit: .exit
            }
        }

        /// What an observer hears when CoreFoundation reports `activity` (a `CFRunLoopActivity`'s raw value): the
        /// first observer each activity, the last (`lastObserver`) only the loop going to sleep. Nil for an
        /// activity the model does not follow. The C model's table (`sw_activity_observed`), which the main loop's
        /// C observers read too.
        @inlinable
        public init?(coreFoundation activity: UInt, lastObserver: Bool) {
            switch sw_activity_observed(activity, lastObserver ? 1 : 0) {
            case .none: return nil
            case .entry: self = .entry
            case .beforeSources: self = .beforeSources
            case .beforeWaiting: self = .beforeWaiting
            case .sleeping: self = .sleeping
            case .afterWaiting: self = .afterWaiting
            case .exit: self = .exit
            }
        }

        /// Whether the transition is stamped by the precise clock (all but `beforeSources`, which a loop that never
        /// sleeps reports at every iteration).
        @inlinable
        public var isPrecise: Bool { sw_activity_is_precise(model) != 0 }
    }

    /// Where the thread is now.
    @inlinable
    public var state: State { Self.state(model.current) }
    // The C model (CStallwatchLoopModel) is the one definition: the agent's C runs it on the main loop's hot path with no
    // call at all. These are inlinable so that a loop thread's observers, which run it here, pay no call either.
    @usableFromInline var model = sw_nesting()

    /// How many nested loops have their outer state restored exactly; deeper ones restore the deepest recorded.
    public static let recordedDepth = Int(SW_NESTING_RECORDED_DEPTH)

    public init() {}

    /// How many loops the thread is inside, of those entered through ``apply(_:mode:)`` (or found by
    /// ``resynchronize(mode:)``); a loop entered by ``enterKeepingOuter(mode:)`` keeps its outer state in its caller.
    public var depth: Int { Int(model.loops) }

    /// Whether the next activity needs ``resynchronize(mode:)`` first: a loop is reporting though no entry was
    /// seen (the observers came after its entry).
    @inlinable
    public func needsMode(for activity: Activity) -> Bool {
        var model = model
        return activity != .entry && activity != .exit && sw_nesting_needs_mode(&model) != 0
    }

    /// Applies one activity; `mode` is the loop's mode for `entry` (ignored otherwise).
    @discardableResult @inlinable
    public mutating func apply(_ activity: Activity, mode: UInt8 = 0) -> State {
        let byte: UInt8
        switch activity {
        case .entry: byte = sw_nesting_enter(&model, mode)
        case .exit: byte = sw_nesting_exit(&model)
        case .beforeSources, .beforeWaiting, .sleeping, .afterWaiting:
            byte = sw_nesting_move(&model, sw_activity_phase(activity.model).rawValue)
        }
        return Self.state(byte)
    }

    /// Undoes the last `entry`, for a run the loop never entered (its mode had nothing in it): back to the state and
    /// mode before it, where `exit` would leave the outermost loop for ``LoopPhase/outsideLoop``.
    @discardableResult @inlinable
    public mutating func cancelEntry() -> State {
        Self.state(sw_nesting_cancel_entry(&model))
    }

    /// `entry` in `mode` for a caller that keeps the state it came from: the byte returned, handed back to
    /// ``exit(to:)`` or ``cancelEntry(to:)`` when the loop returns. The agent's `CFRunLoopRunSpecific` keeps it in its
    /// own frame, so its runs unwind exactly at any depth; the same model as ``apply(_:mode:)``, and the two
    /// interleave.
    @inlinable
    public mutating func enterKeepingOuter(mode: UInt8) -> (state: State, outer: UInt8) {
        let outer = sw_nesting_enter_keeping_outer(&model, sw_nesting_entry_state(mode))
        return (Self.state(model.current), outer)
    }

    /// `exit` of a loop entered by ``enterKeepingOuter(mode:)`` from `outer`.
    @discardableResult @inlinable
    public mutating func exit(to outer: UInt8) -> State {
        Self.state(sw_nesting_exit_to(&model, outer))
    }

    /// ``cancelEntry()`` for an entry made by ``enterKeepingOuter(mode:)`` from `outer`.
    @discardableResult @inlinable
    public mutating func cancelEntry(to outer: UInt8) -> State {
        Self.state(sw_nesting_cancel_entry_to(&model, outer))
    }

    /// Repairs the stack when the loop reports `mode` as current: if it is not the mode of the loop on record,
    /// a loop in `mode` was entered unseen inside it (or, at depth 0, before the observers existed).
    public mutating func resynchronize(mode: UInt8) {
        sw_nesting_resynchronize(&model, mode)
    }

    /// A state byte of the model (`sw_packed_state`: mode and phase).
    @inlinable
    static func state(_ byte: UInt8) -> State {
        State(phase: LoopPhase(rawValue: sw_packed_state_phase(byte)) ?? .notStarted, mode: sw_packed_state_mode(byte))
    }
}
