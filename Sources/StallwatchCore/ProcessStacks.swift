// What `stallwatch stack` captured: a one-shot dump of a live process's thread stacks.

/// One thread's stack at one moment, with what the kernel said the thread was doing just before.
public struct ThreadStack: Equatable, Sendable {
    /// The kernel's thread id (equal to the pid for the main thread).
    public var tid: Int32
    /// The thread's name (`/proc/PID/task/TID/comm`), as the program set it.
    public var name: String
    /// The scheduler state read just before the thread was stopped; nil if unreadable.
    public var state: ThreadState?
    /// Innermost first; empty if the capture failed (see `error`).
    public var frames: [Frame]
    /// How long the thread was stopped for the capture.
    public var stoppedNanoseconds: UInt64?
    /// Why there is no stack, or why it is cut short.
    public var error: String?
    /// The frames left out of a stack deeper than the capture keeps; nil when none were.
    public var truncation: StackTruncation?

    public init(
        tid: Int32, name: String, state: ThreadState?, frames: [Frame], stoppedNanoseconds: UInt64?,
        error: String? = nil, truncation: StackTruncation? = nil
    ) {
        self.tid = tid
        self.name = name
        self.state = state
        self.frames = frames
        self.stoppedNanoseconds = stoppedNanoseconds
        self.error = error
        self.truncation = truncation
    }
}

/// The stacks of a process's threads, taken one thread at a time.
public struct ProcessStacks: Equatable, Sendable {
    public var pid: Int32
    /// `/proc/PID/comm`.
    public var processName: String
    /// When the first thread was stopped, `CLOCK_MONOTONIC` nanoseconds.
    public var capturedAt: UInt64
    /// How many threads the process had (more than `threads` unless every thread was asked for).
    public var threadCount: Int
    /// The main thread first, then the others by thread id.
    public var threads: [ThreadStack]
    /// From stallwatch's start to the last symbolicated frame: the tool's whole cost, as a user waits for it.
    public var elapsedNanoseconds: UInt64
    /// Things that make the stacks less trustworthy, such as a program file replaced since the process started.
    public var warnings: [String]

    public init(
        pid: Int32, processName: String, capturedAt: UInt64, threadCount: Int, threads: [ThreadStack],
        elapsedNanoseconds: UInt64, warnings: [String]
    ) {
        self.pid = pid
        self.processName = processName
        self.capturedAt = capturedAt
        self.threadCount = threadCount
        self.threads = threads
        self.elapsedNanoseconds = elapsedNanoseconds
        self.warnings = warnings
    }
}
