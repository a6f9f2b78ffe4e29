// Judging a thread from /proc as an event loop would be judged: at rest in its wait, or busy.

/// What one `/proc` reading says about a thread that may run an event loop.
public enum EventLoopReading: Equatable, Sendable {
    /// Asleep in an event-loop wait (`epoll_wait`, `poll`, `select`, …): at rest, and proof that it is a loop.
    case waiting
    /// Stopped by a signal or a debugger, or with nothing readable: taken as at rest, so that no loop at rest is
    /// ever reported as stalled, but no proof of a loop.
    case resting
    /// Running, or blocked in anything else: a sleep, a read, disk I/O, a futex.
    case busy

    /// The calls an event loop waits in when it has nothing to do: where CFRunLoop, GLib, libuv, asyncio, Qt and
    /// SwiftNIO's `epoll_wait` rest.
    public static let eventLoopWaits: Set<String> = [
        "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6",
    ]

    /// Judges a reading.
    ///
    /// A `futex` wait counts as busy, with or without a timeout: a loop at rest never waits on one, and one that
    /// does is waiting for a lock, a semaphore, a condition or a group, which is the stall to report. The syscall
    /// file needs ptrace permission; `wchan` stands in for it.
    public init(_ state: ThreadState) {
        switch state.state {
        case "R", "D": self = .busy
        case "T", "t", "Z", "X": self = .resting
        default:
            if let syscall = state.syscall {
                self = Self.eventLoopWaits.contains(syscall) ? .waiting : .busy
            } else if let channel = state.waitChannel {
                self = ["poll", "select"].contains(where: channel.contains) ? .waiting : .busy
            } else {
                self = .resting
            }
        }
    }

    public var isBusy: Bool { self == .busy }
}

/// Whether a thread watched from `/proc` has shown itself to be an event loop.
///
/// A thread is an event loop once it has been seen waiting in an event-loop wait. Until then its busy stretches are
/// not stalls: a main thread parked in `sleep()`, `pthread_join` or a futex for the life of the program (a server
/// whose loops run on other threads, waiting on `closeFuture.wait()`) never was a loop, and is not one endless stall.
public struct EventLoopEvidence: Equatable, Sendable {
    /// Whether the thread was seen in an event-loop wait.
    public private(set) var isEventLoop = false
    /// The wait it was seen in most recently while not yet a loop, to say why it is not watched.
    public private(set) var lastWaitBeforeProof: String?

    public init() {}

    /// Takes one reading; returns true when this reading proves the thread a loop (once).
    public mutating func note(_ state: ThreadState) -> Bool {
        guard !isEventLoop else { return false }
        if EventLoopReading(state) == .waiting {
            isEventLoop = true
            return true
        }
        lastWaitBeforeProof = state.isRunning ? "running" : state.syscall ?? state.waitChannel ?? lastWaitBeforeProof
        return false
    }

    /// Why the thread is not watched, for the summary: "never seen in an event-loop wait (last seen in futex)".
    public var notWatchedReason: String {
        let last = lastWaitBeforeProof.map { " (last seen \($0 == "running" ? "running" : "in \($0)"))" } ?? ""
        return "never seen waiting in an event-loop wait (epoll_wait, poll, select…) nor running a Swift task\(last)"
    }
}
