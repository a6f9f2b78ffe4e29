// Everything a report says about one stall, and about the whole run.

/// One stall of a watched process, as every report format renders it.
public struct StallReport: Equatable, Sendable {
    public var identifier: Int
    public var pid: Int32
    public var tid: Int32
    /// The watched program's name (from `/proc/PID/comm`).
    public var processName: String
    public var phase: LoopPhase
    /// The last run-loop transition before the stall, `CLOCK_MONOTONIC` nanoseconds.
    public var start: UInt64
    /// The first transition after it; `nil` while the stall is unfinished.
    public var end: UInt64?
    /// When the watcher declared the stall.
    public var detectedAt: UInt64
    public var thresholdNanoseconds: UInt64
    public var count: Int
    public var captureMethod: CaptureMethod
    /// Why the capture used a fallback, or failed.
    public var captureNote: String?
    public var samples: [Sample]

    public init(
        identifier: Int, pid: Int32, tid: Int32, processName: String, phase: LoopPhase, start: UInt64,
        end: UInt64?, detectedAt: UInt64, thresholdNanoseconds: UInt64, count: Int,
        captureMethod: CaptureMethod, captureNote: String? = nil, samples: [Sample]
    ) {
        self.identifier = identifier
        self.pid = pid
        self.tid = tid
        self.processName = processName
        self.phase = phase
        self.start = start
        self.end = end
        self.detectedAt = detectedAt
        self.thresholdNanoseconds = thresholdNanoseconds
        self.count = count
        self.captureMethod = captureMethod
        self.captureNote = captureNote
        self.samples = samples
    }

    /// The stall's length in nanoseconds, once it has ended.
    public var duration: UInt64? { end.map { $0 >= start ? $0 - start : 0 } }

    /// The innermost frame of the first sample that belongs to the program rather than to the system
    /// (libc, Foundation, CoreFoundation, libdispatch, the Swift runtime, the vDSO): where to look first.
    public var culprit: Frame? {
        samples.first?.frames.first { ImageClassifier.isApplicationFrame($0) }
    }
}

/// The closing record of a run.
public struct RunSummary: Equatable, Sendable {
    public var stallCount: Int
    public var unfinishedCount: Int
    public var totalStallNanoseconds: UInt64
    public var longestStallNanoseconds: UInt64
    public var runNanoseconds: UInt64
    /// Processes whose main run loop the agent watched.
    public var watchedPids: [Int32]
    /// The workload's exit status as `stallwatch run` returns it.
    public var exitStatus: Int32?
    /// Things the user should know: a loop that never ran, an agent that could not load.
    public var warnings: [String]

    public init(
        stallCount: Int, unfinishedCount: Int, totalStallNanoseconds: UInt64, longestStallNanoseconds: UInt64,
        runNanoseconds: UInt64, watchedPids: [Int32], exitStatus: Int32?, warnings: [String]
    ) {
        self.stallCount = stallCount
        self.unfinishedCount = unfinishedCount
        self.totalStallNanoseconds = totalStallNanoseconds
        self.longestStallNanoseconds = longestStallNanoseconds
        self.runNanoseconds = runNanoseconds
        self.watchedPids = watchedPids
        self.exitStatus = exitStatus
        self.warnings = warnings
    }

    /// Adds up finished stalls; unfinished ones are counted but have no length.
    public init(
        stalls: [StallReport], runNanoseconds: UInt64, watchedPids: [Int32], exitStatus: Int32?,
        warnings: [String]
    ) {
        let durations = stalls.compactMap(\.duration)
        self.init(
            stallCount: stalls.count, unfinishedCount: stalls.count - durations.count,
            totalStallNanoseconds: durations.reduce(0, +), longestStallNanoseconds: durations.max() ?? 0,
            runNanoseconds: runNanoseconds, watchedPids: watchedPids, exitStatus: exitStatus, warnings: warnings)
    }
}
