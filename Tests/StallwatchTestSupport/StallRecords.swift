// The stall records of stallwatch's JSON lines (README, "JSON lines"), as tests read them: `stall`,
// `stall-detected`, and the frames, samples and thread states inside them.
//
// Every key is decoded with its JSON type, so a key of the wrong type fails the test that decodes it. Keys the
// reporters always write are non-optional (a missing one fails too); keys they may write as null are optional;
// `Nullable` where a test tells null from absent, or where only `stallwatch attach` writes the key.

/// A frame: one return address (frame 0: the interrupted instruction) and what it was resolved to.
public struct FrameRecord: Decodable, Equatable, Sendable {
    /// Hex string (`0x…`), in the watched process.
    public let address: String
    /// Path of the ELF file, or `[vdso]`.
    public let image: String?
    /// Hex string: `address` minus the image's load base.
    public let offset: String?
    /// Demangled.
    public let symbol: String?
    public let file: String?
    public let line: Int?
    public let column: Int?
    /// Inlined into the next frame, at the same address.
    public let inlined: Bool
    /// An async caller (read from the task's async contexts), not a native frame.
    public let async: Bool
}

/// `threadState` of a sample or a stack's thread: from `/proc/…/stat`, `syscall` and `wchan`.
public struct ThreadStateRecord: Decodable, Equatable, Sendable {
    /// The state letter (`R`, `S`, `D`, `T`, …).
    public let state: String
    public let syscall: String?
    public let waitChannel: String?
}

/// One sample of a stall: the main thread's stack at one moment.
public struct SampleRecord: Decodable, Equatable, Sendable {
    public let capturedAfterMs: Double
    /// How long the thread was stopped (ptrace only).
    public let stoppedMs: Double?
    public let threadState: ThreadStateRecord?
    public let frames: [FrameRecord]
    /// Frames left out of a stack deeper than `--max-frames`; `null` for a whole stack.
    public let truncated: Nullable<TruncationRecord>
    /// Why the stack ends before the thread's start; `null` when it reaches it.
    public let cutShort: Nullable<String>
}

/// `truncated`: the frames a capture left out between the innermost and the outermost it kept.
public struct TruncationRecord: Decodable, Equatable, Sendable {
    public let omittedFrames: Int?
    public let resumesAtFrame: Int
    public let maxFrames: Int
    public let walkLimited: Bool
    public let reason: String
}

/// `capture`: how the stall's stacks were taken.
public struct CaptureRecord: Decodable, Equatable, Sendable {
    /// `ptrace`, `signal` or `none`.
    public let method: String
    public let note: String?
}

/// `thread`: what the main thread did during the stall.
public struct ThreadVerdictRecord: Decodable, Equatable, Sendable {
    /// `cpuBound`, `blocked` or `mixed`.
    public let verdict: String
    public let cpuPercent: Double?
    /// Share of the measured window the thread waited for a CPU; absent from older records, null where not measured.
    public let runnablePercent: Nullable<Double>?
    /// `lock`, `sleep`, `io`, `child`, `other`.
    public let blockedOn: String?
    /// Who had the CPUs while the thread waited for one; absent from older records, null where not taken.
    public let cpuCensus: Nullable<CensusRecord>?
}

/// `thread.cpuCensus`.
public struct CensusRecord: Decodable, Equatable, Sendable {
    public struct Holder: Decodable, Equatable, Sendable {
        public let pid: Int
        public let tid: Int?
        public let name: String
        public let cpuMs: Double
        public let percentOfACPU: Double
    }

    public let window: String
    public let windowMs: Double
    public let holders: [Holder]
}

/// `confidence`: whether the watcher woke on time.
public struct ConfidenceRecord: Decodable, Equatable, Sendable {
    /// `high` or `low`.
    public let level: String
    public let watcherLateMs: Double
    public let note: String?
}

/// `{"event":"stall", ...}`: one stall, written when it ends (or, unfinished, when the run or session ends).
public struct StallRecord: Decodable, Equatable, Sendable {
    public let event: String
    public let schemaVersion: Int
    /// The machine (`$STALLWATCH_HOST`, or the host name); written by the command line, not by a bare reporter.
    public let host: String?
    public let id: Int
    public let pid: Int
    public let tid: Int
    /// The stalled thread's name (`comm`); null where it could not be read.
    public let threadName: String?
    public let process: String
    public let startedAt: String
    public let startMonotonicMs: Double
    /// `.null` while unfinished.
    public let durationMs: Nullable<Double>
    public let unfinished: Bool
    public let thresholdMs: Double
    public let count: Int
    /// How an attached process, or a thread watched from outside, was watched: `agent`, `external` or `kernel`.
    public let mode: String?
    /// `stallwatch attach` only: the sampling interval in external mode, `.null` through the agent.
    public let resolutionMs: Nullable<Double>
    /// `stallwatch attach` only.
    public let startedBeforeAttach: Bool?
    public let activity: String
    /// The run-loop mode the loop was in when the stall began; `.null` outside any loop or for pings.
    public let runLoopMode: Nullable<String>
    /// `runloop` or `ping`; `.null` seen from outside.
    public let strategy: Nullable<String>
    public let callout: String?
    public let fingerprint: String
    public let detectedAfterMs: Double
    public let capture: CaptureRecord
    public let culprit: FrameRecord?
    /// `.null` without CPU time or thread states.
    public let thread: Nullable<ThreadVerdictRecord>
    /// What the thread waited for; `.null` when it was not blocked in a futex or a wait for a child, or nothing could
    /// be read.
    public let blocker: Nullable<BlockerRecord>
    public let confidence: ConfidenceRecord
    public let samples: [SampleRecord]
    /// `true` for a stall `--rate-limit` shortened (its `samples` are then empty); absent otherwise.
    public let suppressed: Bool?

    /// Every symbol in the stall's samples, in order.
    public var symbols: [String] { samples.flatMap { $0.frames.compactMap(\.symbol) } }
}

/// `{"event":"stall-detected", ...}`: a stall's identity and first sample, written the moment it is detected.
public struct DetectedRecord: Decodable, Equatable, Sendable {
    public let event: String
    public let schemaVersion: Int
    public let id: Int
    public let pid: Int
    public let tid: Int
    public let process: String
    public let startedAt: String
    public let startMonotonicMs: Double
    public let detectedAfterMs: Double
    public let activity: String
    public let runLoopMode: Nullable<String>
    public let callout: String?
    public let fingerprint: String
    public let culprit: FrameRecord?
    /// What the thread waited for at detection.
    public let blocker: Nullable<BlockerRecord>
    public let samples: [SampleRecord]
    /// `true` for a stall `--rate-limit` shortened; absent otherwise.
    public let suppressed: Bool?
}
