// One frame of a captured stack, as reports show it.

/// A stack frame: where it is in memory, which image holds it, and what it is called.
///
/// Addresses belong to the watched process, not to the reader's; they are plain integers.
public struct Frame: Equatable, Sendable, Codable {
    /// The instruction address: the interrupted PC for frame 0, a return address for the others.
    public var address: UInt64
    /// Path of the ELF image containing the address, or `[vdso]`.
    public var image: String?
    /// `address` relative to the image's load base, as `addr2line -e IMAGE` expects.
    public var offset: UInt64?
    /// Demangled function name.
    public var symbol: String?
    /// Source location, where the image has debug info.
    public var file: String?
    public var line: Int?
    public var column: Int?
    /// Whether this frame was inlined into the next one (same address).
    public var inlined: Bool
    /// Whether this is an async caller: not a native frame but a Swift async function awaiting the one before it,
    /// found through the task's async contexts. `address` is then the resume point, the function that continues it
    /// once the awaited call returns, named as is (not a return address).
    public var async: Bool

    public init(
        address: UInt64, image: String? = nil, offset: UInt64? = nil, symbol: String? = nil,
        file: String? = nil, line: Int? = nil, column: Int? = nil, inlined: Bool = false, async: Bool = false
    ) {
        self.address = address
        self.image = image
        self.offset = offset
        self.symbol = symbol
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
        self.async = async
    }

    /// The image's file name without its directory.
    public var imageName: String? {
        image.map { path in path.split(separator: "/").last.map(String.init) ?? path }
    }
}

/// One capture of the main thread's stack during a stall.
public struct Sample: Equatable, Sendable {
    /// Frames from the innermost (the interrupted function) to the outermost (`_start`).
    public var frames: [Frame]
    /// When it was captured, `CLOCK_MONOTONIC` nanoseconds.
    public var capturedAt: UInt64
    /// How long the main thread was stopped for it, where known.
    public var stoppedNanoseconds: UInt64?
    /// The thread's scheduler state just before the capture, where readable.
    public var threadState: ThreadState?
    /// The frames left out of a stack deeper than the capture keeps; nil when the stack is whole.
    public var truncation: StackTruncation?
    /// Why the stack ends before the thread's start (see ``StackEnd``); nil when it reaches it.
    public var cutShort: String?

    public init(
        frames: [Frame], capturedAt: UInt64, stoppedNanoseconds: UInt64? = nil, threadState: ThreadState? = nil,
        truncation: StackTruncation? = nil, cutShort: String? = nil
    ) {
        self.frames = frames
        self.capturedAt = capturedAt
        self.stoppedNanoseconds = stoppedNanoseconds
        self.threadState = threadState
        self.truncation = truncation
        self.cutShort = cutShort
    }
}

/// How a stall's stack was captured, which says how much the capture may have disturbed the workload.
public enum CaptureMethod: String, Sendable, Equatable {
    /// From the stallwatch process with ptrace: the thread is stopped briefly, its syscalls are untouched.
    case ptrace
    /// Inside the workload with a signal: a blocking sleep in the workload may be cut short.
    case signal
    /// No stack could be captured.
    case none
}
