// The other records of stallwatch's JSON output: the run's `summary`, `stallwatch stack`'s `stack`, and `--fps`'s
// `fps` and `frame-drops` (README: "JSON lines", "stallwatch attach", "stallwatch stack"). Typed as in
// StallRecords.swift.

/// One of the summary's `topCulprits`.
public struct CulpritTotalRecord: Decodable, Equatable, Sendable {
    public let symbol: String
    public let totalMs: Double
    public let stalls: Int
}

/// The summary's `busyPeriods`; its percentiles and maximum are null when no period was seen.
public struct BusyPeriodsRecord: Decodable, Equatable, Sendable {
    public let count: Int
    public let p50Ms: Double?
    public let p90Ms: Double?
    public let p99Ms: Double?
    public let p999Ms: Double?
    public let maxMs: Double?
    /// Null when the summary has no threshold.
    public let atLeastThreshold: Int?
}

/// The summary's `budget`.
public struct BudgetRecord: Decodable, Equatable, Sendable {
    public let broken: Bool
    public let violations: [String]
    public let excusedByBaseline: Int
}

/// `{"event":"summary", ...}`: the last record of a run or an attach session.
public struct SummaryRecord: Decodable, Equatable, Sendable {
    public let event: String
    public let schemaVersion: Int
    public let stalls: Int
    public let unfinished: Int
    /// Of ``stalls``, those `--rate-limit` shortened.
    public let suppressed: Int
    public let totalStallMs: Double
    public let longestStallMs: Double
    public let medianStallMs: Double
    public let p95StallMs: Double
    public let topCulprits: [CulpritTotalRecord]
    public let runMs: Double
    public let stalledShare: Double
    public let watchedPids: [Int]
    /// How the processes were watched: `runloop`, `ping`, `mixed`; `.null` when nothing was.
    public let strategy: Nullable<String>
    /// `.null` under `stallwatch attach` (the process is not stallwatch's child).
    public let exitStatus: Nullable<Int>
    public let warnings: [String]
    public let timedOut: Bool
    /// Deadlocks found at the stalls' captures.
    public let deadlocks: Int
    /// Null without run-loop activity.
    public let busyPeriods: BusyPeriodsRecord?
    /// Null without a budget.
    public let budget: BudgetRecord?
    /// Every second's frame rate, in order; `.absent` without `--fps`.
    public let fps: Nullable<[Double]>
    /// `stallwatch attach` only: `agent` or `external`.
    public let mode: String?
    /// `stallwatch attach` only: the watched process.
    public let pid: Int?
    /// `stallwatch attach` only: `duration`, `signal`, `exited`, `agentDisconnected`.
    public let ended: String?
    /// `stallwatch attach` only: the signal that ended the session, `.null` otherwise.
    public let signal: Nullable<Int>
    /// `--thread`: the stalls per thread, absent when every stall was the main thread's.
    public let threads: [ThreadTotalRecord]?
}

/// One thread's stalls in a summary's `threads`.
public struct ThreadTotalRecord: Decodable, Equatable, Sendable {
    public let pid: Int
    public let tid: Int
    public let threadName: String
    public let stalls: Int
    public let totalMs: Double
}

/// One thread of a `stack` record.
public struct StackThreadRecord: Decodable, Equatable, Sendable {
    public let tid: Int
    public let name: String
    public let main: Bool
    public let threadState: ThreadStateRecord?
    public let stoppedMs: Double?
    /// Why the thread has no, or a cut-short, stack.
    public let error: String?
    public let frames: [FrameRecord]
    public let truncated: Nullable<TruncationRecord>
}

/// `{"event":"stack", ...}`: `stallwatch stack --format json`.
public struct StackRecord: Decodable, Equatable, Sendable {
    public let event: String
    public let schemaVersion: Int
    public let pid: Int
    public let process: String
    public let capturedAt: String
    public let captureMonotonicMs: Double
    /// Every thread of the process; `threads` lists those shown.
    public let threadCount: Int
    public let elapsedMs: Double
    public let threads: [StackThreadRecord]
    public let warnings: [String]
}

/// `{"event":"fps", ...}`: one second's frame rate (`--fps`).
public struct FrameRateRecord: Decodable, Equatable, Sendable {
    public let event: String
    public let schemaVersion: Int
    public let pid: Int
    public let startedAt: String
    public let seconds: Double
    public let fps: Double
    public let frames: Int
    public let droppedMs: Double
}

/// `{"event":"frame-drops", ...}`: one run of slow frames (`--fps`).
public struct FrameDropsRecord: Decodable, Equatable, Sendable {
    public let event: String
    public let schemaVersion: Int
    public let pid: Int
    public let startedAt: String
    public let endedAt: String
    public let totalMs: Double
    public let droppedMs: Double
}
