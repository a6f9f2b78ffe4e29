// The collector: one thread, one poll loop over the agent's socket and stallwatch's signals.
import Foundation
import StallwatchCore
import StallwatchReport
import StallwatchSymbols
import StallwatchUnwind

/// Receives the agent's messages, captures stalled stacks from outside, and writes reports.
///
/// Everything happens on one thread: a capture's `waitpid` on the stopped thread can never race a
/// `waitpid` for the workload's exit, and reports are written in the order events happen.
final class Collector {
    private let socket: Int32
    private let signals: SignalChannel
    private let workload: Workload
    private let options: WatchOptions
    private let output: ReportOutput
    private let sampler = RemoteStackSampler()
    private let symbolicator = Symbolicator()

    private var pending: [StallKey: StallReport] = [:]
    private var finished: [StallReport] = []
    private var loadedPids: Set<Int32> = []
    private var watchedPids: [Int32] = []
    private var refusals: [String] = []
    /// Processes that refused ptrace once: later stalls go straight to in-process capture.
    private var ptraceRefused: [Int32: String] = [:]
    private var exitStatus: Int32?
    private var interrupted = false

    struct StallKey: Hashable {
        let pid: Int32
        let identifier: Int
    }

    init(socket: Int32, signals: SignalChannel, workload: Workload, options: WatchOptions, output: ReportOutput) {
        self.socket = socket
        self.signals = signals
        self.workload = workload
        self.options = options
        self.output = output
    }

    /// Runs until the workload exits; returns its raw wait status.
    func run() -> Int32 {
        var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
        while exitStatus == nil {
            var descriptors = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            // The timeout is a safety net: SIGCHLD normally wakes the loop when the workload exits.
            let ready = poll(&descriptors, 2, 1000)
            if ready < 0, errno != EINTR { break }
            if descriptors[1].revents != 0 { handleSignals() }
            if descriptors[0].revents & Int16(POLLIN) != 0 { receiveMessages(into: &buffer) }
            reapWorkload()
        }
        // Messages sent just before the workload exited are still queued: read them all.
        receiveMessages(into: &buffer)
        return exitStatus ?? 0
    }

    /// Every stall seen, finished ones first, then those still in progress when the run ended.
    func closeStalls() -> [StallReport] {
        let unfinished = pending.values.sorted { ($0.start, $0.pid) < ($1.start, $1.pid) }
        for stall in unfinished { output.write(stall) }
        pending.removeAll()
        finished += unfinished
        return finished
    }

    /// What the user should know about what was (not) watched.
    func warnings() -> [String] {
        var warnings = refusals
        if loadedPids.isEmpty {
            warnings.append(
                "the stallwatch agent was never loaded into the workload, so nothing was watched;"
                    + " it is injected with LD_PRELOAD, which statically linked programs and programs that gain"
                    + " privileges (setuid, setgid, file capabilities) ignore")
        } else if watchedPids.isEmpty {
            warnings.append(
                "the workload's main run loop never ran, so nothing was watched; stallwatch watches programs"
                    + " whose main thread runs RunLoop.main or CFRunLoopRun (not dispatchMain() or a plain loop)")
        }
        return warnings
    }

    var watched: [Int32] { watchedPids }

    // MARK: Events

    private func receiveMessages(into buffer: inout [UInt8]) {
        while true {
            let received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if received < 0, errno == EINTR { continue }
            guard received > 0 else { return }
            if let message = WireFormat.decode(AgentMessage.self, from: buffer.prefix(received)) {
                handle(message)
            }
        }
    }

    private func handle(_ message: AgentMessage) {
        switch message {
        case .loaded(let pid, _):
            loadedPids.insert(pid)
        case .refused(let pid, let reason):
            refusals.append("the agent did not watch pid \(pid): \(reason)")
        case .watching(let pid, _):
            if !watchedPids.contains(pid) { watchedPids.append(pid) }
        case .stallBegan(let pid, let tid, let onset):
            stallBegan(pid: pid, tid: tid, onset: onset)
        case .stallEnded(let pid, let identifier, let endedAt):
            let key = StallKey(pid: pid, identifier: identifier)
            guard var stall = pending.removeValue(forKey: key) else { return }
            stall.end = endedAt
            output.write(stall)
            finished.append(stall)
        case .inProcessSample(let pid, let identifier, let addresses, let capturedAt, let imageMap, let error):
            let key = StallKey(pid: pid, identifier: identifier)
            guard var stall = pending[key] else { return }
            if addresses.isEmpty {
                stall.captureMethod = .none
                stall.captureNote = [stall.captureNote, error].compactMap { $0 }.joined(separator: "; ")
            } else {
                let images =
                    imageMap.flatMap { Data(base64Encoded: $0) }.flatMap { ProcessImages(encoded: [UInt8]($0)) }
                    ?? ProcessImages.capture(pid: pid)
                let frames = symbolicator.symbolicate(addresses, images: images)
                stall.samples.append(Sample(frames: frames, capturedAt: capturedAt))
            }
            pending[key] = stall
        }
    }

    private func stallBegan(pid: Int32, tid: Int32, onset: StallOnset) {
        var stall = StallReport(
            identifier: onset.identifier, pid: pid, tid: tid, processName: Self.processName(pid),
            phase: onset.phase, start: onset.start, end: nil, detectedAt: onset.detectedAt,
            thresholdNanoseconds: options.thresholdNanoseconds, count: options.count, captureMethod: .ptrace,
            samples: [])
        let key = StallKey(pid: pid, identifier: onset.identifier)
        if let reason = ptraceRefused[pid] {
            askForInProcessCapture(&stall, reason: reason)
            pending[key] = stall
            return
        }
        let capturedAt = monotonicNow()
        do {
            let stack = try sampler.capture(pid: pid, tid: tid)
            reply(.captured(identifier: onset.identifier))
            // The process may exit at any moment: read its image map before anything else.
            let images = ProcessImages.capture(pid: pid)
            let frames = symbolicator.symbolicate(stack.addresses, images: images)
            stall.samples.append(
                Sample(frames: frames, capturedAt: capturedAt, stoppedNanoseconds: stack.stoppedNanoseconds))
        } catch {
            switch error {
            case .permissionDenied(let code):
                let reason = PtraceAdvice.explain(errno: code, pid: pid)
                ptraceRefused[pid] = reason
                askForInProcessCapture(&stall, reason: reason)
            case .processExited:
                // Not reaped by the sampler: the poll loop collects the workload's status as usual.
                stall.captureMethod = .none
                stall.captureNote = "the process exited while its stack was being captured"
            case .noSuchThread:
                stall.captureMethod = .none
                stall.captureNote = "the thread was gone before its stack could be captured"
                reply(.captured(identifier: onset.identifier))
            case .failed(let reason):
                askForInProcessCapture(&stall, reason: "ptrace capture failed (\(reason))")
            }
        }
        pending[key] = stall
    }

    private func askForInProcessCapture(_ stall: inout StallReport, reason: String) {
        stall.captureMethod = .signal
        stall.captureNote =
            reason
            + "; captured in-process with a signal instead, which can cut a blocking sleep in the workload short"
        reply(.captureInProcess(identifier: stall.identifier, reason: reason))
    }

    private func reply(_ message: CollectorMessage) {
        let bytes = WireFormat.encode(message)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    private func handleSignals() {
        for received in signals.drain() where received.signal != SIGCHLD {
            // A terminal's Ctrl-C already reached the workload (same process group); forward only what
            // another process sent to stallwatch alone, so the workload sees each signal once.
            if received.fromProcess { kill(workload.pid, received.signal) }
            interrupted = true
        }
    }

    private func reapWorkload() {
        guard exitStatus == nil else { return }
        var status: Int32 = 0
        let result = waitpid(workload.pid, &status, WNOHANG)
        // A late ptrace stop (after a capture timed out) is reported here too: not an exit.
        let stopped = status & 0xff == 0x7f
        if result == workload.pid, !stopped { exitStatus = status }
        if result < 0, errno == ECHILD { exitStatus = exitStatus ?? 0 }
    }

    static func processName(_ pid: Int32) -> String {
        let comm = ProcFile.read("/proc/\(pid)/comm")?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return comm.flatMap { $0.isEmpty ? nil : $0 } ?? "pid \(pid)"
    }
}

/// `CLOCK_MONOTONIC` now, in nanoseconds: the time base shared with the agent.
func monotonicNow() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
