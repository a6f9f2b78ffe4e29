// Building one stall's report from its onset, samples and end: the same rules for the collector and library mode.

/// Collects what is learnt about one stall, from its detection to its end, and makes its report.
///
/// Pure: the caller reads the clocks, `/proc` and the stacks, and hands the readings in; the assembler decides what
/// the report says (which capture method stood, the thread's state at each sample, its CPU share).
public struct StallAssembler: Sendable {
    /// The report so far.
    public private(set) var report: StallReport
    /// The thread's CPU time and the clock at detection, for the stall's CPU share.
    private var cpuAtDetection: (cpu: UInt64, wall: UInt64)?
    /// The thread's run-queue wait at detection, where the kernel counts it.
    private var runQueueAtDetection: UInt64?
    /// Every process's CPU time at detection, for a census of who had the CPUs if the thread waits for one.
    private var censusAtDetection: CPUCensus.Reading?
    /// The thread's state read before the latest capture (in-process samples arrive later and take it).
    public private(set) var lastState: ThreadState?
    /// `--max-samples`: beyond it, every other sample is dropped (see ``SampleSchedule``).
    private let maxSamples: Int
    /// Whether ``applyRateLimit(_:atEnd:)`` has decided this stall.
    private var rateLimitDecided = false
    /// The fingerprint a stall admitted by the rate limit was counted under: its first sample's.
    private var admittedAs: String?

    /// Below this much wall time the scheduler's 10 ms tick makes a CPU share meaningless.
    static let shortestTimedStall: UInt64 = 50_000_000

    public init(
        onset: StallOnset, pid: Int32, tid: Int32, processName: String, settings: WatchSettings,
        captureMethod: CaptureMethod, threadName: String? = nil
    ) {
        report = StallReport(
            identifier: onset.identifier, pid: pid, tid: tid, processName: processName, phase: onset.phase,
            start: onset.start, end: nil, detectedAt: onset.detectedAt,
            thresholdNanoseconds: settings.thresholdNanoseconds, count: settings.count,
            captureMethod: captureMethod, samples: [])
        report.mode = onset.mode
        report.threadName = threadName
        maxSamples = settings.maxSamples
    }

    /// The stall's identity among the process's stalls.
    public var identifier: Int { report.identifier }

    /// The thread's CPU time at detection (`cpu`) and the monotonic clock then (`now`).
    ///   - runQueue: the thread's run-queue wait so far (``ThreadInspector/runQueueTime(pid:tid:)``), if known.
    ///   - census: every process's CPU time then, taken when the thread was running or runnable at detection.
    public mutating func startCPUClock(
        cpu: UInt64?, runQueue: UInt64? = nil, census: CPUCensus.Reading? = nil, now: UInt64
    ) {
        if let cpu { cpuAtDetection = (cpu, now) }
        runQueueAtDetection = runQueue
        censusAtDetection = census
    }

    /// Whether a census was started at detection: the caller reads the second one at the stall's end.
    public var wantsCensus: Bool { censusAtDetection != nil }

    /// Below this share of its window spent waiting for a CPU, a stall's census is left out: it was not the CPUs.
    static let censusRunnablePercent = 10.0

    /// The thread's state just before a capture; a `restart_syscall` continues the call seen before it.
    public mutating func noteState(_ state: ThreadState?) {
        lastState = state?.continuing(lastState)
    }

    /// A captured, named stack; dropped for a suppressed stall, which keeps the one sample that named it.
    public mutating func add(
        frames: [Frame], capturedAt: UInt64, stoppedNanoseconds: UInt64? = nil, method: CaptureMethod? = nil,
        truncation: StackTruncation? = nil, unwindError: Int32 = 0
    ) {
        guard !report.suppressed else { return }
        if let method { report.captureMethod = method }
        // A stack limited by --max-frames says so in its truncation; one that ends early for another reason, here.
        let cutShort = StackEnd.cutShortNote(
            frames: frames, unwindError: unwindError, walkLimit: truncation?.walkLimit)
        let shown = InterpositionFrames.hidden(from: frames, truncation: truncation)
        report.samples.append(
            Sample(
                frames: shown.frames, capturedAt: capturedAt, stoppedNanoseconds: stoppedNanoseconds,
                threadState: lastState, truncation: shown.truncation,
                cutShort: truncation != nil && truncation?.omittedFrames == nil ? nil : cutShort))
        report.samples = SampleSchedule.thin(report.samples, maxSamples: maxSamples)
    }

    /// `--rate-limit`: applies `limiter` once the stall's first sample names its fingerprint. A stall over the limit is
    /// ``StallReport/suppressed``: it keeps that sample only, and its sampler takes no more (``isSuppressed``).
    ///
    /// - Parameter atEnd: the stall is over, all its samples in: one that no sample named (its captures failed) is
    ///   decided now, and one admitted under its first sample's fingerprint counts towards its final one instead
    ///   (``RateLimiter/recount(from:to:admittedAt:)``). Nothing to do without a limiter.
    public mutating func applyRateLimit(_ limiter: inout RateLimiter?, atEnd: Bool = false) {
        guard limiter != nil else { return }
        if !rateLimitDecided, atEnd || !report.samples.isEmpty {
            rateLimitDecided = true
            let fingerprint = report.fingerprint
            if limiter?.admit(fingerprint, at: report.detectedAt) == false {
                report.suppressed = true
            } else {
                admittedAs = fingerprint
            }
        }
        if atEnd, let provisional = admittedAs {
            admittedAs = nil
            limiter?.recount(from: provisional, to: report.fingerprint, admittedAt: report.detectedAt)
        }
    }

    /// Whether the stall was shortened by the rate limit: no more samples are to be taken.
    public var isSuppressed: Bool { report.suppressed }

    /// A capture that failed: the stall has no capture method if it has no sample yet.
    ///
    /// - Parameter keepingEarlierNote: add `note` to the note so far (the agent's in-process failure follows the
    ///   reason it was asked to capture) rather than replace it.
    public mutating func noteCaptureFailure(_ note: String?, keepingEarlierNote: Bool = false) {
        if report.samples.isEmpty { report.captureMethod = .none }
        // Several samples failing alike say it once.
        if keepingEarlierNote, let note, report.captureNote?.contains(note) == true { return }
        report.captureNote =
            keepingEarlierNote ? [report.captureNote, note].compactMap { $0 }.joined(separator: "; ") : note
    }

    /// Something a sample lacks though its capture worked (its async callers could not be read): said once, however
    /// many samples share it.
    public mutating func noteStackProblem(_ problem: String?) {
        guard let problem, !(report.captureNote?.contains(problem) ?? false) else { return }
        report.captureNote = [report.captureNote, problem].compactMap { $0 }.joined(separator: "; ")
    }

    /// Capture moved in-process (ptrace refused): the method and why, for the report.
    public mutating func fallBackToSignalCapture(reason: String) {
        report.captureMethod = .signal
        report.captureNote =
            reason
            + "; captured in-process with a signal instead, which can cut a blocking sleep in the workload short"
    }

    /// What the thread waits for, found at a capture (only the first one found is kept: later samples do not look).
    /// - Parameter searchNanoseconds: how long finding it took, the holders' captures included.
    public mutating func note(blocker: Blocker, searchNanoseconds: UInt64? = nil) {
        guard report.blocker == nil else { return }
        report.blocker = blocker
        report.blockerSearchNanoseconds = searchNanoseconds
    }

    /// How an attached process's stall was seen.
    public mutating func note(attached: AttachedStall) {
        report.attached = attached
    }

    /// The watch ended at `now` with the stall still going on.
    public mutating func watchEnded(at now: UInt64) {
        if report.end == nil { report.watchedUntil = now }
    }

    /// The stall ended when the loop moved again at `end`.
    public mutating func end(at end: UInt64) {
        report.end = end
    }

    /// The finished report (unfinished if ``end(at:)`` was never called): its CPU share up to its end, from the
    /// thread's CPU time `cpuNow` read at `now`, and what the thread was doing.
    /// `runQueueNow` is the thread's run-queue wait read then: the share of the window the thread was runnable but off
    /// every CPU.
    /// `censusNow` is every process's CPU time then (when ``wantsCensus``): who had the CPUs, if the thread waited for
    /// one.
    public func finished(
        cpuNow: UInt64?, runQueueNow: UInt64? = nil, censusNow: CPUCensus.Reading? = nil, now: UInt64
    ) -> StallReport {
        var finished = report
        var cpuPercent: Double?
        var runnablePercent: Double?
        if let baseline = cpuAtDetection, let cpuNow {
            // Up to the stall's end, not to now: the end message arrives up to a threshold later.
            let end = report.end ?? now
            let wall = end > baseline.wall ? end - baseline.wall : 0
            if wall >= Self.shortestTimedStall {
                cpuPercent = min(100, Double(cpuNow - min(cpuNow, baseline.cpu)) / Double(wall) * 100)
                if let before = runQueueAtDetection, let runQueueNow {
                    runnablePercent = min(100, Double(runQueueNow - min(runQueueNow, before)) / Double(wall) * 100)
                }
            }
        }
        finished.threadActivity = ThreadActivity(
            cpuPercent: cpuPercent, states: report.samples.compactMap(\.threadState))
        finished.threadActivity?.runnablePercent = runnablePercent
        if let before = censusAtDetection, let censusNow, let runnablePercent,
            runnablePercent >= Self.censusRunnablePercent
        {
            finished.threadActivity?.cpuCensus = CPUCensus.between(
                before, censusNow, stalledPid: report.pid, stalledTid: report.tid)
        }
        return finished
    }
}
