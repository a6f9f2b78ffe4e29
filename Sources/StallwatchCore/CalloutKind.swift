// Which kind of run-loop callout a stall happened in, read from CoreFoundation's callout frame.

/// The kind of work the run loop was calling out to when it stalled.
///
/// CoreFoundation calls out through functions whose names say what they call (they exist so that stacks are
/// readable); the innermost one on the stack is the callout that stalled.
public enum CalloutKind: String, Sendable, Equatable, CaseIterable {
    case timer
    /// A version-0 source (`CFRunLoopSourceSignal`).
    case source0
    /// A version-1 (port) source.
    case source1
    /// A block on the main dispatch queue (`DispatchQueue.main.async`).
    case mainQueue
    /// A block scheduled with `CFRunLoopPerformBlock` / `RunLoop.perform`.
    case performBlock
    /// A run-loop observer's callback.
    case observer

    /// CoreFoundation's callout function for each kind.
    static let calloutFunctions: [(String, CalloutKind)] = [
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__", .timer),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION__", .source0),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION__", .source1),
        ("__CFRUNLOOP_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__", .mainQueue),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_BLOCK__", .performBlock),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION__", .observer),
    ]

    /// The innermost callout in a stack (frames innermost first), if any.
    public init?(frames: [Frame]) {
        for frame in frames {
            guard let symbol = frame.symbol else { continue }
            if let match = Self.calloutFunctions.first(where: { symbol.hasPrefix($0.0) }) {
                self = match.1
                return
            }
        }
        return nil
    }

    /// How a report names it: "a timer callback".
    public var phrase: String {
        switch self {
        case .timer: "a timer callback"
        case .source0: "a version-0 source"
        case .source1: "a port (version-1) source"
        case .mainQueue: "a main-queue block"
        case .performBlock: "a perform block"
        case .observer: "a run-loop observer"
        }
    }
}
