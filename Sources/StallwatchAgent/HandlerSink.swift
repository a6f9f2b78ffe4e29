// Library mode's sink: each stall's stack from the capture helper (ptrace, named by its symbolicator), or with a
// signal when the helper cannot be had; finished reports go to the app's handler.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchImages
import Synchronization

/// Assembles each stall's report and hands it to the app's handler when the stall ends, on the watcher thread.
final class HandlerSink: StallSink {
    private let settings: WatchSettings
    private let handler: @Sendable (StallReport) -> Void
    /// Nil when the app asked for signal capture.
    private let helper: CaptureHelperClient?
    /// The signal fallback's symbolicator: the toolchain's in-process source only, made the first time it is needed.
    private lazy var symbolicator = Symbolicator()
    private var pending: StallAssembler?
    private var schedule = SampleSchedule(maxSamples: 1)
    private var moment = 0
    /// The signal fallback's image map, read at its stall's first in-process capture.
    private var images: ProcessImages?
    /// The watcher thread, so that ``StallMonitor/stop()`` called from the handler does not wait for itself; read
    /// from any thread.
    private let watcherThreadID = Atomic<Int32>(0)
    var watcherThread: Int32 { watcherThreadID.load(ordering: .relaxed) }

    init(settings: WatchSettings, helper: CaptureHelperClient?, handler: @escaping @Sendable (StallReport) -> Void) {
        self.settings = settings
        self.helper = helper
        self.handler = handler
    }

    func watchingStarted(strategy: WatchStrategy) {
        watcherThreadID.store(sw_agent_gettid(), ordering: .relaxed)
        // Started from the watcher thread, which lives as long as the monitor: the helper's death signal follows
        // the thread that started it. Started now, it is ready before the first stall.
        helper?.start()
    }

    func busyPeriods(_ histogram: LatencyHistogram) {}

    /// The library API has no frame-rate handler (yet): `--fps` is a `stallwatch run` feature.
    func frameRate(_ event: FrameRateMonitor.Event) {}

    func stallBegan(_ onset: StallOnset, thread: Int32?) {
        watcherThreadID.store(sw_agent_gettid(), ordering: .relaxed)
        let pid = getpid()
        let tid = thread ?? pid
        images = nil
        var stall = StallAssembler(
            onset: onset, pid: pid, tid: tid, processName: ProcessInfo.processInfo.processName, settings: settings,
            captureMethod: helper == nil ? .signal : .ptrace)
        stall.startCPUClock(cpu: ThreadInspector.cpuTime(pid: pid, tid: tid), now: sw_agent_now_ns())
        pending = stall
        schedule = SampleSchedule(maxSamples: settings.maxSamples)
        moment = 0
        _ = schedule.shouldSample(atMoment: moment)
        takeSample()
    }

    func stallContinues(_ onset: StallOnset, thread: Int32?) {
        guard let stall = pending, stall.identifier == onset.identifier else { return }
        moment += 1
        guard schedule.shouldSample(atMoment: moment) else { return }
        takeSample()
    }

    private func takeSample() {
        guard var stall = pending else { return }
        let tid = stall.report.tid
        stall.noteState(ThreadInspector.state(pid: stall.report.pid, tid: tid))
        if let helper {
            switch helper.capture(tid: tid, maxFrames: settings.maxFrames) {
            case .captured(let stack):
                stall.add(
                    frames: stack.frames, capturedAt: stack.capturedAt, stoppedNanoseconds: stack.stoppedNanoseconds,
                    method: .ptrace, truncation: stack.truncation, unwindError: stack.unwindError)
                stall.noteStackProblem(stack.asyncCallersError)
                pending = stall
                return
            case .failed(let reason, threadGone: true):
                stall.noteCaptureFailure(reason)
                pending = stall
                return
            case .failed(let reason, threadGone: false), .unavailable(let reason):
                stall.fallBackToSignalCapture(reason: reason)
            }
        }
        captureWithSignal(&stall, tid: tid)
        pending = stall
    }

    /// The fallback: a signal to the thread, whose handler unwinds; named in-process with the toolchain's symbols.
    private func captureWithSignal(_ stall: inout StallAssembler, tid: Int32) {
        let capture = InProcessCapture.capture(tid: tid, maxFrames: settings.inProcessMaxFrames)
        guard !capture.addresses.isEmpty else {
            stall.noteCaptureFailure(capture.error, keepingEarlierNote: true)
            return
        }
        let images = self.images ?? ProcessImages.captureCurrentProcess()
        self.images = images
        // The thread runs again: its task's async callers are read from this process's heap now, through reads
        // that fail rather than fault.
        let named = AsyncCallers.splice(
            into: symbolicator.symbolicate(capture.addresses, images: images), hints: capture.asyncHints,
            images: images, memory: ProcessMemory.current, symbolicator: symbolicator)
        let frames = named.frames
        // The in-process capture stops at the limit: what lies beyond is not known.
        let truncation =
            capture.addresses.count >= settings.inProcessMaxFrames
            ? StackTruncation(omittedFrames: nil, resumesAt: frames.count, maxFrames: settings.inProcessMaxFrames)
            : nil
        stall.add(
            frames: frames, capturedAt: capture.capturedAt, stoppedNanoseconds: capture.stoppedNanoseconds,
            method: .signal, truncation: truncation)
        stall.noteStackProblem(named.error)
    }

    func stallEnded(_ onset: StallOnset, endedAt: UInt64) {
        guard var stall = pending, stall.identifier == onset.identifier else { return }
        stall.end(at: endedAt)
        pending = nil
        deliver(stall)
    }

    /// The monitor stopped: a stall still in progress is reported as unfinished, and the helper is ended.
    func finish() {
        // Still outside its loop: the program left it for good (see `StallReport.isOutsideLoop`).
        if let stall = pending, !stall.report.isOutsideLoop {
            pending = nil
            deliver(stall)
        }
        pending = nil
        helper?.stop()
    }

    private func deliver(_ stall: StallAssembler) {
        let report = stall.report
        handler(
            stall.finished(cpuNow: ThreadInspector.cpuTime(pid: report.pid, tid: report.tid), now: sw_agent_now_ns()))
    }
}
