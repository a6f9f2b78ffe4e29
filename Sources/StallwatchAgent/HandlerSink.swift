// Library mode's sink: each stall's stack from the capture helper (ptrace, named by its symbolicator), or with a
// signal when the helper cannot be had; finished reports go to the app's handler.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchImages
import Synchronization

/// How library mode takes a stalled thread's stack.
enum LibraryCapture {
    /// Through the capture helper (ptrace), with a signal when the helper cannot be had.
    case helper(CaptureHelperClient)
    /// With a signal, as the app asked.
    case signal
    /// Not at all: each stall is reported without stacks, and `reason` says why.
    case none(reason: String)

    var helper: CaptureHelperClient? {
        if case .helper(let helper) = self { helper } else { nil }
    }

    /// The method a stall's report starts with.
    var method: CaptureMethod {
        switch self {
        case .helper: .ptrace
        case .signal: .signal
        case .none: .none
        }
    }
}

/// Assembles each stall's report and hands it to the app's handler when the stall ends and its stacks are in, on the
/// watcher thread.
final class HandlerSink: StallSink {
    /// One stall between its detection and its delivery, and its sampling.
    private struct Open {
        var assembler: StallAssembler
        var schedule: SampleSchedule
        var moment = 0
        /// The signal fallback's image map, read at the stall's first in-process capture.
        var images: ProcessImages?
        /// Helper requests not answered yet: the report waits for them.
        var pending = 0
        /// When the stall ended, with the thread's CPU time then; nil while it lasts.
        var ended: (at: UInt64, cpu: UInt64?)?
        /// Time spent on its stacks (`STALLWATCH_METRICS`): signal captures, helper requests until answered.
        var captureNanoseconds: UInt64?
        /// Whether the app was told of the stall at its detection (``StallMonitor/Event/detected(_:)``).
        var detectionDelivered = false

        mutating func countCaptureTime(_ nanoseconds: UInt64) {
            captureNanoseconds = (captureNanoseconds ?? 0) + nanoseconds
        }
    }

    private let settings: WatchSettings
    private let detected: @Sendable (StallReport) -> Void
    private let handler: @Sendable (StallReport) -> Void
    private let capture: LibraryCapture
    private var helper: CaptureHelperClient? { capture.helper }
    /// The signal fallback's symbolicator: the toolchain's in-process source only, made the first time it is needed.
    private lazy var symbolicator = Symbolicator()
    /// The stalls not delivered yet, by identifier: several loops (`threads`) may be stalled at once.
    private var open: [Int: Open] = [:]
    /// Which stall each helper request is for.
    private var requests: [Int: Int] = [:]
    /// The rate limit's window of each fingerprint; nil reports every stall in full.
    private var rateLimiter: RateLimiter?
    /// When each helper request was sent, for the capture time.
    private var requestsSentAt: [Int: UInt64] = [:]
    /// `STALLWATCH_METRICS`: the endpoint's numbers; nil without it.
    private let metrics: LibraryMetrics?
    /// The watcher thread, so that ``StallMonitor/stop()`` called from the handler does not wait for itself; read
    /// from any thread.
    private let watcherThreadID = Atomic<Int32>(0)
    var watcherThread: Int32 { watcherThreadID.load(ordering: .relaxed) }

    init(
        settings: WatchSettings, capture: LibraryCapture, metrics: LibraryMetrics? = nil,
        detected: @escaping @Sendable (StallReport) -> Void = { _ in }, ended: @escaping @Sendable (StallReport) -> Void
    ) {
        self.settings = settings
        self.capture = capture
        self.metrics = metrics
        self.detected = detected
        handler = ended
        rateLimiter = settings.rateLimit.map(RateLimiter.init)
    }

    func watchingStarted(strategy: WatchStrategy) {
        watcherThreadID.store(sw_agent_gettid(), ordering: .relaxed)
        // Started from the watcher thread, which lives as long as the monitor: the helper's death signal follows
        // the thread that started it. Started now, it is ready before the first stall.
        helper?.start()
        metrics?.watching(tid: getpid(), showsMain: settings.threads.contains { $0 == .main || $0 == .all })
    }

    func loopThreadWatched(tid: Int32) { metrics?.watching(tid: tid, showsMain: false) }

    func busyPeriods(_ histogram: LatencyHistogram) { metrics?.busyPeriods(histogram) }

    /// The library API has no frame-rate handler (yet): `--fps` is a `stallwatch run` feature.
    func frameRate(_ event: FrameRateMonitor.Event) {}

    func stallBegan(_ onset: StallOnset, thread: Int32?) {
        watcherThreadID.store(sw_agent_gettid(), ordering: .relaxed)
        let pid = getpid()
        let tid = thread ?? pid
        // The main loop is always observed; its stalls count only if `threads` picks the main thread.
        let loopThread = onset.phase == .mainQueue ? pid : tid
        guard settings.threads.matches(tid: loopThread, name: ThreadInspector.name(pid: pid, tid: loopThread), pid: pid)
        else { return }
        var assembler = StallAssembler(
            onset: onset, pid: pid, tid: tid, processName: ProcessInfo.processInfo.processName, settings: settings,
            captureMethod: capture.method,
            threadName: tid == pid ? nil : ThreadInspector.name(pid: pid, tid: tid))
        assembler.startCPUClock(cpu: ThreadInspector.cpuTime(pid: pid, tid: tid), now: sw_agent_now_ns())
        var schedule = SampleSchedule(maxSamples: settings.maxSamples)
        _ = schedule.shouldSample(atMoment: 0)
        open[onset.identifier] = Open(assembler: assembler, schedule: schedule)
        // Outside the loop, only the thread's return to it makes a stall (see `StallReport.isOutsideLoop`).
        if !onset.phase.isOutsideLoop { metrics?.stallDetected(assembler.report) }
        takeSample(onset.identifier)
        deliverDetectionIfReady(onset.identifier)
    }

    func stallContinues(_ onset: StallOnset, thread: Int32?) {
        // Over the rate limit: the sample that named it is all it takes.
        guard var stall = open[onset.identifier], !stall.assembler.isSuppressed else { return }
        stall.moment += 1
        let due = stall.schedule.shouldSample(atMoment: stall.moment)
        open[onset.identifier] = stall
        if due { takeSample(onset.identifier) }
    }

    private func takeSample(_ identifier: Int) {
        guard var stall = open[identifier] else { return }
        // One request in flight per stall: the helper may have the thread stopped still (its state would read as
        // traced, not as the call it is in), and a slow helper gets no queue of requests.
        if capture.helper != nil, stall.pending > 0 { return }
        let tid = stall.assembler.report.tid
        stall.assembler.noteState(ThreadInspector.state(pid: stall.assembler.report.pid, tid: tid))
        defer { open[identifier] = stall }
        switch capture {
        case .none(let reason): stall.assembler.noteCaptureFailure(reason)
        case .signal: captureWithSignal(&stall, tid: tid)
        case .helper(let helper):
            switch helper.request(tid: tid, maxFrames: settings.maxFrames, now: sw_agent_now_ns()) {
            case .sent(let request):
                requests[request] = identifier
                requestsSentAt[request] = sw_agent_now_ns()
                stall.pending += 1
            case .unavailable(let reason):
                stall.assembler.fallBackToSignalCapture(reason: reason)
                captureWithSignal(&stall, tid: tid)
            }
        }
    }

    func tick(now: UInt64) {
        metrics?.check(now: now)
        guard let helper, helper.hasPending else { return }
        for (request, outcome) in helper.collect(now: now) { take(outcome, of: request) }
    }

    var nextWake: UInt64? {
        guard let helper, helper.hasPending else { return nil }
        // Answers are collected at the watcher's wakes: soon after they come, and at the latest at their deadline.
        return min(helper.nextDeadline ?? .max, sw_agent_now_ns() + Self.answerPollInterval)
    }

    /// How often the watcher looks for the helper's answers while some are awaited.
    static let answerPollInterval: UInt64 = 5_000_000

    /// One request's outcome, into its stall; a stall that ended and has all its stacks is delivered.
    private func take(_ outcome: CaptureHelperClient.Outcome, of request: Int) {
        let sentAt = requestsSentAt.removeValue(forKey: request)
        guard let identifier = requests.removeValue(forKey: request), var stall = open[identifier] else { return }
        stall.pending -= 1
        if let sentAt { stall.countCaptureTime(sw_agent_now_ns() - sentAt) }
        switch outcome {
        case .captured(let stack):
            stall.assembler.add(
                frames: stack.frames, capturedAt: stack.capturedAt, stoppedNanoseconds: stack.stoppedNanoseconds,
                method: .ptrace, truncation: stack.truncation, unwindError: stack.unwindError)
            stall.assembler.noteStackProblem(stack.asyncCallersError)
            stall.assembler.applyRateLimit(&rateLimiter)
        case .failed(let reason, threadGone: true):
            stall.assembler.noteCaptureFailure(reason)
        case .failed(let reason, threadGone: false), .unavailable(let reason):
            if stall.ended == nil {
                // Still stalled: a stack now is still this stall's.
                stall.assembler.fallBackToSignalCapture(reason: reason)
                captureWithSignal(&stall, tid: stall.assembler.report.tid)
            } else {
                stall.assembler.noteCaptureFailure(reason, keepingEarlierNote: true)
            }
        }
        open[identifier] = stall
        deliverDetectionIfReady(identifier)
        deliverIfComplete(identifier)
    }

    /// The stall's provisional report, once its first stack is in (or known not to come): what is known at detection,
    /// so that a stall that never ends (a deadlock) is still seen. Outside its loop a thread's stall may prove none
    /// (see `StallReport.isOutsideLoop`): it is told of only when it ends.
    private func deliverDetectionIfReady(_ identifier: Int) {
        guard var stall = open[identifier], !stall.detectionDelivered, stall.pending == 0,
            !stall.assembler.report.isOutsideLoop
        else { return }
        stall.detectionDelivered = true
        open[identifier] = stall
        var provisional = stall.assembler.report
        // Told as detected, whatever has happened since the first stack was asked for.
        provisional.end = nil
        detected(provisional)
    }

    /// The fallback: a signal to the thread, whose handler unwinds; named in-process with the toolchain's symbols.
    private func captureWithSignal(_ stall: inout Open, tid: Int32) {
        let began = sw_agent_now_ns()
        defer { stall.countCaptureTime(sw_agent_now_ns() - began) }
        let capture = InProcessCapture.capture(tid: tid, maxFrames: settings.inProcessMaxFrames)
        guard !capture.addresses.isEmpty else {
            stall.assembler.noteCaptureFailure(capture.error, keepingEarlierNote: true)
            return
        }
        let images = stall.images ?? ProcessImages.captureCurrentProcess()
        stall.images = images
        // The thread runs again: its task's async callers are read from this process's heap now, through reads
        // that fail rather than fault.
        let named = AsyncCallers.splice(
            into: symbolicator.symbolicate(capture.addresses, images: images), hints: capture.asyncHints,
            images: images, memory: ProcessMemory.current, symbolicator: symbolicator)
        let frames = named.frames
        let truncation = StackTruncation.ofInProcessCapture(
            frames: frames, addressCount: capture.addresses.count, limit: settings.inProcessMaxFrames)
        stall.assembler.add(
            frames: frames, capturedAt: capture.capturedAt, stoppedNanoseconds: capture.stoppedNanoseconds,
            method: .signal, truncation: truncation)
        stall.assembler.noteStackProblem(named.error)
        stall.assembler.applyRateLimit(&rateLimiter)
    }

    func stallEnded(_ onset: StallOnset, endedAt: UInt64) {
        guard var stall = open[onset.identifier] else { return }
        stall.assembler.end(at: endedAt)
        let report = stall.assembler.report
        stall.ended = (endedAt, ThreadInspector.cpuTime(pid: report.pid, tid: report.tid))
        open[onset.identifier] = stall
        deliverIfComplete(onset.identifier)
    }

    private func deliverIfComplete(_ identifier: Int) {
        guard var stall = open[identifier], let ended = stall.ended, stall.pending == 0 else { return }
        open[identifier] = nil
        stall.assembler.applyRateLimit(&rateLimiter, atEnd: true)
        let report = stall.assembler.finished(cpuNow: ended.cpu, now: ended.at)
        metrics?.stallFinished(report, captureNanoseconds: stall.captureNanoseconds)
        handler(report)
    }

    /// The monitor stopped: the answers still awaited are waited for (a bounded time), the stalls still in progress
    /// are reported as unfinished, and the helper is ended.
    func finish() {
        if let helper {
            let deadline = sw_agent_now_ns() + CaptureHelperClient.answerTimeoutNanoseconds
            for (request, outcome) in helper.finish(until: deadline) { take(outcome, of: request) }
        }
        let unfinished = open.values.sorted { $0.assembler.identifier < $1.assembler.identifier }
        open.removeAll()
        // Still outside its loop: the program left it for good (see `StallReport.isOutsideLoop`).
        for stall in unfinished where !stall.assembler.report.isOutsideLoop { deliver(stall) }
        helper?.stop()
        metrics?.stop()
    }

    /// In a child of `fork()`: the parent's stalls and helper are left to the parent.
    func abandonAfterFork() {
        open.removeAll()
        requests.removeAll()
        helper?.abandonAfterFork()
        metrics?.abandonAfterFork()
    }

    private func deliver(_ unfinished: Open) {
        var stall = unfinished
        stall.assembler.applyRateLimit(&rateLimiter, atEnd: true)
        let report = stall.assembler.report
        let finished = stall.assembler.finished(
            cpuNow: ThreadInspector.cpuTime(pid: report.pid, tid: report.tid), now: sw_agent_now_ns())
        metrics?.stallFinished(finished, captureNanoseconds: stall.captureNanoseconds)
        handler(finished)
    }
}
