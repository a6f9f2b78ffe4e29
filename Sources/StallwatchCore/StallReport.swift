// Everything a report says about one stall, and about the whole run.

/// One stall of a watched process, as every report format renders it.
///
/// A plain value: `StallMonitor` hands one to the app's handler per stall, and `JSONLinesReporter.render(_:)`
/// (module StallwatchReport) encodes it as the `stall` record `stallwatch run --format json` writes.
public struct StallReport: Equatable, Sendable {
    /// The stall's number among the process's stalls, from 1.
    public var identifier: Int
    public var pid: Int32
    /// The stalled thread: the main thread, or the one serving the main queue under the ping strategy.
    public var tid: Int32
    /// The stalled thread's name (`/proc/PID/task/TID/comm`), where it could be read.
    public var threadName: String?
    /// The watched program's name (from `/proc/PID/comm`).
    public var processName: String
    /// What the loop was doing when it stopped moving (waiting, a timer, a source, outside the loop, ...).
    public var phase: LoopPhase
    /// The run-loop mode the loop was running in when the stall began; nil outside any loop, for a main-queue
    /// ping, or when unknown.
    public var mode: String?
    /// The last run-loop transition before the stall, `CLOCK_MONOTONIC` nanoseconds.
    public var start: UInt64
    /// The first transition after it; `nil` while the stall is unfinished.
    public var end: UInt64?
    /// When the watcher declared the stall.
    public var detectedAt: UInt64
    /// The watcher's settings: `count` busy timeouts of `thresholdNanoseconds` made the stall.
    public var thresholdNanoseconds: UInt64
    public var count: Int
    /// How the stacks were taken: `ptrace` from another process, `signal` in-process, or `none`.
    public var captureMethod: CaptureMethod
    /// Why the capture used a fallback, or failed.
    public var captureNote: String?
    /// The stalled thread's stacks, in order, the first at detection.
    public var samples: [Sample]
    /// CPU-bound or blocked, from the thread's CPU time and states; nil where unreadable.
    public var threadActivity: ThreadActivity?
    /// How `stallwatch attach` saw the stall; nil under `stallwatch run`.
    public var attached: AttachedStall?
    /// For a stall still going on when the watch ended: when that was. Its length so far runs to here.
    public var watchedUntil: UInt64?
    /// Shortened by the rate limit (`--rate-limit`, library mode's ``RateLimit/libraryDefault``): its fingerprint had
    /// all its full reports in the current window, so the stall kept the one sample that named its fingerprint and
    /// culprit, and its record leaves the samples out.
    public var suppressed = false
    /// What the thread waited for, found at the first capture that saw it blocked in a futex or a wait for a child:
    /// the lock and its holder, or the child. Nil where it was not blocked so, or nothing could be read.
    public var blocker: Blocker?
    /// How long finding ``blocker`` took in the collector (its reads, and each holder's capture and naming).
    public var blockerSearchNanoseconds: UInt64?

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

    /// How the stall was seen: `ping` for an unanswered main-queue ping, `runLoop` for the run-loop observers;
    /// nil seen from outside (`stallwatch attach --mode external`) and for a task on an executor thread, which neither
    /// strategy watches (its jobs are seen where the concurrency runtime hands them to libdispatch).
    public var strategy: WatchStrategy? {
        if attached?.mode.knowsLoopPhase == false || phase == .task { return nil }
        return phase == .mainQueue ? .ping : .runLoop
    }

    /// Whether the stall is the main thread's: its run loop, or its main queue (which a worker may serve).
    public var isMainThreadStall: Bool { tid == pid || phase == .mainQueue }

    /// The thread's role for grouping: its name with numbers normalised (``ThreadRole``); nil on the main thread, so
    /// main-thread fingerprints stay as they were before `--thread`.
    public var threadRole: String? {
        isMainThreadStall ? nil : ThreadRole.of(name: threadName ?? "?")
    }

    /// Where the stall was, as reports say it: `Daemon (pid 42)`, or `Daemon (pid 42), thread NIO-ELT-0-#1 (tid 45)`
    /// for a thread other than the main one.
    public var place: String {
        let process = "\(processName) (pid \(pid))"
        guard !isMainThreadStall else { return process }
        return process + ", thread \(threadName ?? "?") (tid \(tid))"
    }

    /// Whether the stall is time spent outside the thread's outermost run loop (a loop pumped by hand).
    ///
    /// The rule: such a stall counts only once the thread comes back to its loop. One still in progress when the
    /// watch ends is the program leaving its loop for good (its shutdown), not an endless stall, and is dropped.
    public var isOutsideLoop: Bool { phase == .outsideLoop }

    /// The stall's length in nanoseconds, once it has ended.
    public var duration: UInt64? { end.map { $0 >= start ? $0 - start : 0 } }

    /// How long the stall lasted, or had lasted when the watch ended (unfinished); the one length the summary,
    /// the budgets and the reports all count.
    public func length(endOfRun: UInt64? = nil) -> UInt64 {
        if let duration { return duration }
        guard let until = watchedUntil ?? endOfRun else { return 0 }
        return until > start ? until - start : 0
    }

    /// The innermost frame of the first sample that the program's author wrote: in the program's own image rather
    /// than the system's (libc, Foundation, CoreFoundation, libdispatch, the Swift runtime, the vDSO), and not a
    /// witness, thunk, library specialization or compiler-generated code (``UserCode``): where to look first. With
    /// no such frame, the innermost frame of the program's image.
    public var culprit: Frame? {
        let frames = samples.first?.frames ?? []
        return frames.first(where: UserCode.isUserWritten) ?? frames.first(where: ImageClassifier.isApplicationFrame)
    }

    /// Whether any sample has a user-written frame: the culprit rules then look at those frames only.
    var hasUserWrittenFrames: Bool {
        samples.contains { $0.frames.contains(where: UserCode.isUserWritten) }
    }

    /// The frames the culprit may be: user-written ones, or, in a stall with none, the program's image's.
    func isCandidate(_ frame: Frame) -> Bool {
        hasUserWrittenFrames ? UserCode.isUserWritten(frame) : ImageClassifier.isApplicationFrame(frame)
    }
}

/// The closing record of a run.
public struct RunSummary: Equatable, Sendable {
    /// Where stalled time went: one dominant function and its stalls.
    public struct Culprit: Equatable, Sendable {
        public var symbol: String
        public var totalNanoseconds: UInt64
        public var count: Int

        public init(symbol: String, totalNanoseconds: UInt64, count: Int) {
            self.symbol = symbol
            self.totalNanoseconds = totalNanoseconds
            self.count = count
        }
    }

    public var stallCount: Int
    public var unfinishedCount: Int
    /// The stalls the rate limit shortened (``StallReport/suppressed``); ``stallCount`` counts them too.
    public var suppressedCount: Int
    public var totalStallNanoseconds: UInt64
    public var longestStallNanoseconds: UInt64
    /// Median and 95th percentile of finished stalls' lengths (nearest rank); 0 without any.
    public var medianStallNanoseconds: UInt64
    public var p95StallNanoseconds: UInt64
    /// Dominant functions by total stalled time, largest first (at most five).
    public var topCulprits: [Culprit]
    public var runNanoseconds: UInt64
    /// Processes whose main run loop the agent watched.
    public var watchedPids: [Int32]
    /// How they were watched: `runLoop` (observers on the main run loop) or `ping` (main-queue pings, for a
    /// program with no run loop), each once.
    public var strategies: [WatchStrategy] = []
    /// The workload's exit status as `stallwatch run` returns it.
    public var exitStatus: Int32?
    /// Things the user should know: a loop that never ran, an agent that could not load.
    public var warnings: [String]
    /// The CI budget's verdict, when a budget was set (`--fail-on-stall`, `--max-stall`, ...).
    public var budget: StallBudget.Verdict?
    /// `--timeout` expired and stallwatch stopped the workload.
    public var timedOut = false
    /// Every run-loop busy period (waking to sleeping) of the run, where the agent recorded them.
    public var busyPeriods: LatencyHistogram?
    /// `--threshold`, to count the busy periods that reached it.
    public var thresholdNanoseconds: UInt64?
    /// `--fps`: each second's effective frame rate, in order; nil when `--fps` was not given.
    public var framesPerSecond: [Double]?
    /// How the `stallwatch attach` session went; nil under `stallwatch run`.
    public var attached: AttachOutcome?
    /// The stalls per thread, when some were not the main thread's (`--thread`); empty otherwise.
    public var threads: [ThreadTotal]
    /// Deadlocks found at the stalls' captures, each once.
    public var deadlockCount = 0

    /// Adds up the stalls of a run; unfinished ones are counted but have no length.
    public init(
        stalls: [StallReport], runNanoseconds: UInt64, watchedPids: [Int32], exitStatus: Int32?,
        warnings: [String]
    ) {
        let durations = stalls.compactMap(\.duration).sorted()
        // Unfinished stalls count with the length they had reached, as the budgets count them.
        let lengths = stalls.map { $0.length() }
        stallCount = stalls.count
        unfinishedCount = stalls.count - durations.count
        suppressedCount = stalls.filter(\.suppressed).count
        totalStallNanoseconds = lengths.reduce(0, +)
        longestStallNanoseconds = lengths.max() ?? 0
        medianStallNanoseconds = Self.percentile(50, of: durations)
        p95StallNanoseconds = Self.percentile(95, of: durations)
        var culprits: [String: Culprit] = [:]
        for stall in stalls {
            let symbol = stall.dominantFrame?.symbol ?? "(unknown)"
            var culprit = culprits[symbol] ?? Culprit(symbol: symbol, totalNanoseconds: 0, count: 0)
            culprit.totalNanoseconds += stall.length()
            culprit.count += 1
            culprits[symbol] = culprit
        }
        topCulprits = Array(
            culprits.values.sorted {
                ($0.totalNanoseconds, $0.count, $1.symbol) > ($1.totalNanoseconds, $1.count, $0.symbol)
            }
            .prefix(5))
        self.runNanoseconds = runNanoseconds
        self.watchedPids = watchedPids
        self.exitStatus = exitStatus
        self.warnings = warnings
        threads = ThreadTotal.of(stalls)
    }

    /// Nearest-rank percentile of sorted values.
    static func percentile(_ percent: Int, of sorted: [UInt64]) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = (percent * sorted.count + 99) / 100
        return sorted[max(0, min(sorted.count - 1, rank - 1))]
    }
}
