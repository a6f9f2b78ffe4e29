// Taking a stalled thread's samples: from outside with ptrace when permitted, otherwise by asking the agent to
// capture in-process; then naming the frames.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchImages
import StallwatchSymbols
import StallwatchUnwind

/// Captures and names the samples of the collector's open stalls.
///
/// Keeps what many captures of one process share: the sampler's opened images, each process's last image map, and
/// which processes refused ptrace (their later stalls go straight to in-process capture).
final class StallCapturer {
    /// A stall between its detection and its end: its report so far and what its samples need.
    struct OpenStall {
        var assembler: StallAssembler
        /// Read once, at the first capture: the images do not change during a stall.
        var images: ProcessImages?
        /// Whether a capture looked for what the thread waits for (once per stall: the first that found it blocked
        /// in a futex or a wait for a child).
        var blockerSought = false
        /// A deadlock that search found, for the collector to report (once per cycle).
        var deadlock: DeadlockReport?
        /// The time spent capturing and naming its samples so far (`--metrics`); nil before the first.
        var captureNanoseconds: UInt64?

        /// Adds the time since `began` to ``captureNanoseconds``.
        mutating func countCaptureTime(since began: UInt64) {
            captureNanoseconds = (captureNanoseconds ?? 0) + (monotonicNow() - began)
        }

        var key: Collector.StallKey { Collector.StallKey(pid: assembler.report.pid, identifier: assembler.identifier) }
    }

    /// The agent's socket, to answer its capture requests; nil in external mode.
    private let socket: Int32?
    let sampler = RemoteStackSampler()
    let symbolicator = CollectorSymbolicator.make(environment: ProcessInfo.processInfo.environment)
    /// Each process's last image map, reused while it covers the stacks captured.
    private var knownImages: [Int32: ProcessImages] = [:]
    /// Processes that refused ptrace once, and the explanation.
    private var ptraceRefused: [Int32: String] = [:]

    /// Frames kept per stack (`--max-frames`).
    let maxFrames: Int

    init(socket: Int32?, maxFrames: Int = WatchSettings().maxFrames) {
        self.socket = socket
        self.maxFrames = maxFrames
    }

    /// Takes one sample of `tid`.
    ///
    /// - Parameter rateLimiter: `--rate-limit`, applied once the sample names the stall's fingerprint: a stall over
    ///   the limit seeks no blocker either (that would stop the holders too).
    func sample(_ stall: inout OpenStall, tid: Int32, rateLimiter: inout RateLimiter?) {
        let began = monotonicNow()
        defer { stall.countCaptureTime(since: began) }
        let pid = stall.assembler.report.pid
        let identifier = stall.assembler.identifier
        let state = ThreadInspector.state(pid: pid, tid: tid)
        stall.assembler.noteState(state)
        // What it waits for is read now, before the stop changes it; the search follows the capture.
        let waitsForSomeone = state?.waitReason == .lock || state?.waitReason == .child || state?.waitReason == .io
        let call = !stall.blockerSought && waitsForSomeone ? ThreadInspector.syscallReading(pid: pid, tid: tid) : nil
        if let reason = ptraceRefused[pid] {
            askForInProcessCapture(&stall.assembler, reason: reason)
            return
        }
        let capturedAt = monotonicNow()
        var heldBy: TracerHold?
        do {
            let stack = try captureBesideOtherTracers(pid: pid, tid: tid, heldBy: &heldBy)
            reply(.captured(identifier: identifier))
            if let heldBy { stall.assembler.noteStackProblem(heldBy.note(captured: true)) }
            let images = self.images(for: &stall, covering: stack.addresses)
            // The thread runs again: the async callers are read from the heap now.
            let named = AsyncCallers.splice(
                into: symbolicator.symbolicate(stack.addresses, images: images), hints: stack.asyncHints, pid: pid,
                images: images, symbolicator: symbolicator)
            // By ptrace, also when an earlier attempt of this stall (another tracer's hold) found no sample.
            stall.assembler.add(
                frames: named.frames, capturedAt: capturedAt, stoppedNanoseconds: stack.stoppedNanoseconds,
                method: stall.assembler.report.captureMethod == .none ? .ptrace : nil,
                truncation: StackTruncation.of(frames: named.frames, stack: stack, maxFrames: maxFrames),
                unwindError: stack.unwindError)
            stall.assembler.noteStackProblem(named.error)
            stall.assembler.applyRateLimit(&rateLimiter)
            if let call, !stall.assembler.isSuppressed {
                stall.blockerSought = true
                findBlocker(&stall, tid: tid, call: call, frames: named.frames)
            }
        } catch {
            switch error {
            case .permissionDenied where heldBy != nil:
                // Another tracer's hold is no refusal: later samples try ptrace again.
                let note = heldBy?.note(captured: false)
                if socket == nil {
                    stall.assembler.noteCaptureFailure(note, keepingEarlierNote: true)
                } else {
                    askForInProcessCapture(&stall.assembler, reason: note ?? "")
                }
            case .permissionDenied(let code):
                let reason = PtraceDiagnosis.refusal(errno: code, pid: pid)
                ptraceRefused[pid] = reason
                askForInProcessCapture(&stall.assembler, reason: reason)
            case .processExited:
                // Not reaped by the sampler: the poll loop collects the workload's status as usual.
                stall.assembler.noteCaptureFailure("the process exited while its stack was being captured")
            case .noSuchThread:
                stall.assembler.noteCaptureFailure("the thread was gone before its stack could be captured")
                reply(.captured(identifier: identifier))
            case .failed(let reason):
                askForInProcessCapture(&stall.assembler, reason: "ptrace capture failed (\(reason))")
            }
        }
    }

    /// Another tracer (a debugger, `strace`, another stallwatch's `stack`) that held a thread when it was captured.
    struct TracerHold {
        let pid: Int32
        let name: String
        var retries: Int

        /// The capture note: who held the thread, and how the retries went.
        func note(captured: Bool) -> String {
            let held = "another tracer (pid \(pid), \(name)) held the thread"
            let times = "\(retries) time\(retries == 1 ? "" : "s")"
            return captured ? "\(held); captured after retrying \(times)" : "\(held); retried \(times), in vain"
        }
    }

    /// Pauses between captures of a thread another tracer holds: a tracer as brief as `stallwatch stack` or a gdb
    /// backtrace lets go within them, and together they stay under the shortest stall threshold worth having.
    static let tracerRetryPauses: [UInt32] = [5_000, 10_000, 20_000, 40_000]

    /// Captures `tid`, retrying a few times while another process traces it (ptrace allows one tracer).
    /// - Parameter heldBy: set when another tracer held the thread at some attempt.
    private func captureBesideOtherTracers(
        pid: Int32, tid: Int32, heldBy: inout TracerHold?
    ) throws(RemoteCaptureError) -> RemoteStack {
        var attempt = 0
        while true {
            do {
                return try sampler.capture(pid: pid, tid: tid, maxFrames: maxFrames)
            } catch .permissionDenied(let code) {
                guard let tracer = Self.otherTracer(pid: pid, tid: tid) else { throw .permissionDenied(errno: code) }
                heldBy = TracerHold(
                    pid: tracer, name: ThreadInspector.processName(pid: tracer), retries: heldBy?.retries ?? 0)
                guard attempt < Self.tracerRetryPauses.count else { throw .permissionDenied(errno: code) }
                usleep(Self.tracerRetryPauses[attempt])
                attempt += 1
                heldBy?.retries = attempt
            }
        }
    }

    /// The process tracing the thread, if one other than stallwatch does (`TracerPid` in its status).
    static func otherTracer(pid: Int32, tid: Int32) -> Int32? {
        let line = FileBytes.text("/proc/\(pid)/task/\(tid)/status")?.split(separator: "\n")
            .first { $0.hasPrefix("TracerPid:") }
        guard let tracer = line?.split(whereSeparator: \.isWhitespace).last.flatMap({ Int32($0) }), tracer > 0,
            tracer != getpid()
        else { return nil }
        return tracer
    }

    /// A stack the agent captured itself, with its image map the first time.
    func receiveInProcessSample(
        _ stall: inout OpenStall, addresses: [UInt64], asyncCallers: AsyncCallersFound?, capturedAt: UInt64,
        imageMap: String?, error: String?
    ) {
        let began = monotonicNow()
        defer { stall.countCaptureTime(since: began) }
        let pid = stall.assembler.report.pid
        if let imageMap, let bytes = Data(base64Encoded: imageMap), var sent = ProcessImages(encoded: [UInt8](bytes)) {
            // The agent's paths are its own: in a container, read them through its root.
            sent.fileRoot = ProcessImages.fileRoot(of: pid)
            stall.images = sent
        }
        guard !addresses.isEmpty else {
            stall.assembler.noteCaptureFailure(error, keepingEarlierNote: true)
            return
        }
        let images = stall.images ?? ProcessImages.capture(pid: pid)
        stall.images = images
        // The agent read them: this process may not read the workload's memory (the permission ptrace needs).
        let native = symbolicator.symbolicate(addresses, images: images)
        let named = asyncCallers.map {
            AsyncCallers.insert($0, into: native, images: images, symbolicator: symbolicator)
        }
        let frames = named?.frames ?? native
        let truncation = StackTruncation.ofInProcessCapture(
            frames: frames, addressCount: addresses.count, limit: min(maxFrames, WatchSettings.inProcessFrameLimit))
        stall.assembler.add(frames: frames, capturedAt: capturedAt, truncation: truncation)
        stall.assembler.noteStackProblem(named?.error)
    }

    /// The process's image map: the stall's, else the process's last one if it still covers every address
    /// (libraries rarely come and go), else a fresh one — read right away, as the process may exit any time.
    func images(for stall: inout OpenStall, covering addresses: [UInt64]) -> ProcessImages {
        let pid = stall.assembler.report.pid
        if let images = stall.images ?? knownImages[pid],
            addresses.allSatisfy({ $0 == 0 || images.image(containing: $0) != nil })
        {
            stall.images = images
            return images
        }
        let images = ProcessImages.capture(pid: pid)
        stall.images = images
        knownImages[pid] = images
        return images
    }

    private func askForInProcessCapture(_ assembler: inout StallAssembler, reason: String) {
        guard socket != nil else {
            // External mode: no agent to capture in-process.
            assembler.noteCaptureFailure(reason)
            return
        }
        assembler.fallBackToSignalCapture(reason: reason)
        reply(.captureInProcess(identifier: assembler.identifier, reason: reason))
    }

    /// Answers the agent; a gone agent is not an error here (the poll loop notices the hang-up).
    func reply(_ message: CollectorMessage) {
        guard let socket else { return }
        let bytes = WireFormat.encode(message)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }
}
