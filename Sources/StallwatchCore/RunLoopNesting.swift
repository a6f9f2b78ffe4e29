// Which phase the main thread is in when run loops nest or are pumped by hand: entry pushes, exit pops.

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
    }

    /// Where the thread is now.
    public var state: State { current }
    // Inlinable, with their stored state: they run on the watched thread at every run-loop transition, and a call
    // into this module costs more than their work. A fixed inline stack rather than an array, so that entering and
    // leaving a loop (every iteration of `RunLoop.run(until:)`) is a store and a load, with no uniqueness check,
    // growth path or call into the standard library.
    @usableFromInline var current = State(phase: .notStarted, mode: 0)
    /// The states to restore, outermost first: one per loop the thread is inside, the first ``recordedDepth`` of them.
    @usableFromInline var outer = InlineArray<16, State>(repeating: State(phase: .notStarted, mode: 0))
    @usableFromInline var loops = 0

    /// How many nested loops have their outer state restored exactly; deeper ones restore the deepest recorded.
    public static let recordedDepth = 16

    public init() {}

    /// How many loops the thread is inside.
    public var depth: Int { loops }

    /// Whether the next activity needs ``resynchronize(mode:)`` first: a loop is reporting though no entry was
    /// seen (the observers came after its entry).
    @inlinable
    public func needsMode(for activity: Activity) -> Bool {
        activity != .entry && activity != .exit && loops == 0
    }

    /// Applies one activity; `mode` is the loop's mode for `entry` (ignored otherwise).
    @discardableResult @inlinable
    public mutating func apply(_ activity: Activity, mode: UInt8 = 0) -> State {
        switch activity {
        case .entry:
            push()
            current = State(phase: .entry, mode: mode)
        case .exit:
            // An exit with no entry on record (missed) leaves the thread outside every loop it is known to be in.
            if loops > 1 {
                loops -= 1
                current = outer[min(loops, outer.count - 1)]
            } else {
                loops = 0
                current = State(phase: .outsideLoop, mode: 0)
            }
        case .beforeSources: current.phase = .beforeSources
        case .beforeWaiting: current.phase = .beforeWaiting
        case .sleeping: current.phase = .sleeping
        case .afterWaiting: current.phase = .afterWaiting
        }
        return current
    }

    /// Undoes the last `entry`, for a run the loop never entered (its mode had nothing in it): back to the state and
    /// mode before it, where `exit` would leave the outermost loop for ``LoopPhase/outsideLoop``.
    @discardableResult @inlinable
    public mutating func cancelEntry() -> State {
        guard loops > 0 else { return current }
        loops -= 1
        current = outer[min(loops, outer.count - 1)]
        return current
    }

    @inlinable
    mutating func push() {
        if loops < outer.count { outer[loops] = current }
        loops += 1
    }

    /// Repairs the stack when the loop reports `mode` as current: if it is not the mode of the loop on record,
    /// a loop in `mode` was entered unseen inside it (or, at depth 0, before the observers existed).
    public mutating func resynchronize(mode: UInt8) {
        guard loops == 0 || mode != current.mode else { return }
        push()
        current.mode = mode
    }
}
