// The collector: one thread, one poll loop over the agent's socket and stallwatch's signals (and, attached to a
// process without an agent, the external watcher's samples).
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchReport
import StallwatchSymbols
import StallwatchUnwind

/// Receives the agent's messages, captures stalled stacks from outside, and writes reports.
///
/// Everything happens on one thread: a capture's `waitpid` on the stopped thread can never race a
/// `waitpid` for the workload's exit, and reports are written in the order events happen.
///
/// Under `run` it watches a child it reaps; under `attach`, a process it must leave as it found it (see
/// ``CollectorTarget``), through the process's agent or, with no socket, through an ``ExternalWatcher``.
final class Collector {
    /// The agent's socket; nil in external mode.
    private let socket: Int32?
    private let signals: SignalChannel
    private let target: CollectorTarget
    private let options: WatchOptions
    private let output: any StallReportWriter
    private let sampler = RemoteStackSampler()
    private let symbolicator = CLISymbolicator.make(environment: ProcessInfo.processInfo.environment)

    private var pending: [StallKey: OpenStall] = [:]
    /// Each process's last image map, reused while it covers the stacks captured.
    private var knownImages: [Int32: ProcessImages] = [:]
    private var finished: [StallReport] = []
    private var loadedPids: Set<Int32> = []
    private var watchedPids: [Int32] = []
    private var refusals: [String] = []
    /// Processes that refused ptrace once: later stalls go straight to in-process capture.
    private var ptraceRefused: [Int32: String] = [:]
    private var exitStatus: Int32?
    private var interrupted = false
    /// The run loop's busy periods, per watched process (the agent's cumulative counts).
    private var busyPeriods: [Int32: LatencyHistogram] = [:]
    /// `--fps`: every second's effective frame rate, in the order the readings arrived (all processes).
    private var frameRates: [Double] = []
    /// Names of processes that sent frame rates: read once, not once a second.
    private var frameRateProcessNames: [Int32: String] = [:]

    /// The run's frame-rate series for the summary; nil without `--fps`.
    var framesPerSecond: [Double]? { options.frameRate == nil ? nil : frameRates }

    /// Every watched process's busy periods together; nil if no agent sent any.
    var busyPeriodHistogram: LatencyHistogram? {
        guard !busyPeriods.isEmpty else { return nil }
        var merged = LatencyHistogram()
        for histogram in busyPeriods.values { merged.merge(histogram) }
        return merged
    }
    /// `--timeout`'s deadline and, once it passed, when SIGKILL follows SIGTERM (`CLOCK_MONOTONIC` ns).
    private var timeoutDeadline: UInt64?
    private var killDeadline: UInt64?
    /// Whether `--timeout` expired and the workload was told to stop.
    private(set) var timedOut = false
    /// Why an attach session ended; nil while it goes on, and under `run`.
    private(set) var ending: AttachEnding?

    struct StallKey: Hashable {
        let pid: Int32
        let identifier: Int
    }

    convenience init(
        socket: Int32, signals: SignalChannel, workload: Workload, options: WatchOptions, output: ReportOutput
    ) {
        self.init(socket: socket, signals: signals, target: .child(workload), options: options, output: output)
    }

    init(
        socket: Int32?, signals: SignalChannel, target: CollectorTarget, options: WatchOptions,
        output: any StallReportWriter
    ) {
        self.socket = socket
        self.signals = signals
        self.target = target
        self.options = options
        self.output = output
        if case .child = target, let timeout = options.timeout {
            timeoutDeadline = monotonicNow() + timeout.nanoseconds
        }
    }

    /// Runs until the workload exits (returning its raw wait status) or, attached, until the session ends
    /// (returning 0; ``ending`` says why).
    func run() -> Int32 {
        var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
        while exitStatus == nil, ending == nil {
            var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0)]
            if let socket { descriptors.insert(pollfd(fd: socket, events: Int16(POLLIN), revents: 0), at: 0) }
            let signalIndex = descriptors.count - 1
            // Under run the timeout is a safety net: SIGCHLD normally wakes the loop when the workload exits.
            let ready = poll(&descriptors, nfds_t(descriptors.count), pollTimeout())
            if ready < 0, errno != EINTR { break }
            if descriptors[signalIndex].revents != 0 { handleSignals() }
            if socket != nil {
                let events = descriptors[0].revents
                if events & Int16(POLLIN) != 0 {
                    receiveMessages(into: &buffer)
                } else if events & Int16(POLLHUP | POLLERR) != 0, case .attached(let attached) = target {
                    ending = attached.process.isAlive() ? .agentDisconnected : .exited
                }
            }
            switch target {
            case .child:
                enforceTimeout()
                reapWorkload()
            case .attached(let attached): followAttached(attached)
            }
        }
        // Messages sent just before the workload exited are still queued: read them all.
        if socket != nil { receiveMessages(into: &buffer) }
        return exitStatus ?? 0
    }

    private func pollTimeout() -> Int32 {
        let now = monotonicNow()
        guard case .attached(let attached) = target else {
            // The timeout and its grace period are the only deadlines of a run.
            let wake =
                [timeoutDeadline.flatMap { timedOut ? nil : $0 }, killDeadline, now + 1_000_000_000]
                .compactMap { $0 }.min() ?? now
            return wake > now ? Int32((wake - now + 999_999) / 1_000_000) : 0
        }
        // Short enough to notice the process's exit promptly: nothing else announces it to a non-parent.
        var wake = now + 100_000_000
        if let deadline = attached.deadline { wake = min(wake, deadline) }
        if let watcher = attached.watcher { wake = min(wake, watcher.nextWake) }
        return wake > now ? Int32((wake - now + 999_999) / 1_000_000) : 0
    }

    /// Attached: ends the session at the deadline or the process's exit, and takes external samples when due.
    private func followAttached(_ attached: AttachedTarget) {
        guard ending == nil else { return }
        let now = monotonicNow()
        if !attached.process.isAlive() {
            ending = .exited
        } else if let deadline = attached.deadline, now >= deadline {
            ending = .duration
        } else if let watcher = attached.watcher, now >= watcher.nextWake {
            for message in watcher.step(now: now) { handle(message) }
        }
    }

    /// Every stall seen, finished ones first, then those still in progress when the run ended.
    func closeStalls() -> [StallReport] {
        var unfinished = pending.values.sorted { ($0.report.start, $0.report.pid) < ($1.report.start, $1.report.pid) }
        pending.removeAll()
        for index in unfinished.indices { close(&unfinished[index]) }
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
                    + " whose main thread runs RunLoop.main or CFRunLoopRun, or whose main queue dispatchMain()"
                    + " serves (not a plain loop)")
        }
        return warnings
    }

    var watched: [Int32] { watchedPids }
    /// What agents said when they would not watch (a part of ``warnings()``).
    var agentRefusals: [String] { refusals }

    // MARK: Events

    private func receiveMessages(into buffer: inout [UInt8]) {
        guard let socket else { return }
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
        case .busyPeriods(let pid, let buckets):
            // Each message holds the agent's counts so far: keep the latest per process.
            busyPeriods[pid] = LatencyHistogram(sparse: buckets)
        case .frameRate(let pid, let start, let end, let frames, let dropped):
            let reading = FrameRateMonitor.Reading(start: start, end: end, frames: frames, dropped: dropped)
            frameRates.append(reading.framesPerSecond)
            writeFrameRate(pid: pid, event: .reading(reading))
        case .frameDrops(let pid, let begin, let end, let total, let dropped):
            writeFrameRate(
                pid: pid,
                event: .drops(FrameRateMonitor.DropRecord(begin: begin, end: end, total: total, dropped: dropped)))
        case .loaded(let pid, _):
            loadedPids.insert(pid)
        case .refused(let pid, let reason):
            refusals.append("the agent did not watch pid \(pid): \(reason)")
        case .watching(let pid, _):
            if !watchedPids.contains(pid) { watchedPids.append(pid) }
        case .stallBegan(let pid, let tid, let onset):
            stallBegan(pid: pid, tid: tid, onset: onset)
        case .stallSample(let pid, let tid, let identifier, _):
            guard var stall = pending[StallKey(pid: pid, identifier: identifier)] else {
                reply(.captured(identifier: identifier))
                return
            }
            sample(&stall, tid: tid)
            pending[stall.key] = stall
        case .stallEnded(let pid, let identifier, let endedAt):
            guard var stall = pending.removeValue(forKey: StallKey(pid: pid, identifier: identifier)) else { return }
            stall.report.end = endedAt
            close(&stall)
        case .inProcessSample(let pid, let identifier, let addresses, let capturedAt, let imageMap, let error):
            guard var stall = pending[StallKey(pid: pid, identifier: identifier)] else { return }
            if let imageMap, let bytes = Data(base64Encoded: imageMap) {
                if var sent = ProcessImages(encoded: [UInt8](bytes)) {
                    // The agent's paths are its own: in a container, read them through its root.
                    sent.fileRoot = ProcessImages.fileRoot(of: pid)
                    stall.images = sent
                }
            }
            if addresses.isEmpty {
                if stall.report.samples.isEmpty { stall.report.captureMethod = .none }
                stall.report.captureNote = [stall.report.captureNote, error].compactMap { $0 }.joined(separator: "; ")
            } else {
                let images = stall.images ?? ProcessImages.capture(pid: pid)
                stall.images = images
                stall.report.samples.append(
                    Sample(
                        frames: symbolicator.symbolicate(addresses, images: images), capturedAt: capturedAt,
                        threadState: stall.lastState))
            }
            pending[stall.key] = stall
        }
    }

    private func writeFrameRate(pid: Int32, event: FrameRateMonitor.Event) {
        let name = frameRateProcessNames[pid] ?? Self.processName(pid)
        frameRateProcessNames[pid] = name
        output.write(FrameRateReport(pid: pid, processName: name, event: event))
    }

    /// A stall between its detection and its end: the report so far and what its samples need.
    struct OpenStall {
        var report: StallReport
        /// Read once, at the first capture: the images do not change during a stall.
        var images: ProcessImages?
        /// The thread's CPU time and the collector's clock at detection, for the stall's CPU share.
        var cpuAtDetection: (cpu: UInt64, wall: UInt64)?
        /// The thread's state read before the latest capture (for in-process samples, which arrive later).
        var lastState: ThreadState?

        var key: StallKey { StallKey(pid: report.pid, identifier: report.identifier) }
    }

    private func stallBegan(pid: Int32, tid: Int32, onset: StallOnset) {
        let report = StallReport(
            identifier: onset.identifier, pid: pid, tid: tid, processName: Self.processName(pid),
            phase: onset.phase, start: onset.start, end: nil, detectedAt: onset.detectedAt,
            thresholdNanoseconds: options.thresholdNanoseconds, count: options.count, captureMethod: .ptrace,
            samples: [])
        var stall = OpenStall(report: report)
        if let cpu = ThreadInspector.cpuTime(pid: pid, tid: tid) { stall.cpuAtDetection = (cpu, monotonicNow()) }
        sample(&stall, tid: tid)
        pending[stall.key] = stall
        // On record at once: if stallwatch is killed before the stall ends, the file still has it.
        output.writeDetected(stall.report)
    }

    /// Takes one sample: from outside with ptrace when permitted, otherwise by asking the agent.
    private func sample(_ stall: inout OpenStall, tid: Int32) {
        let pid = stall.report.pid
        let identifier = stall.report.identifier
        stall.lastState = ThreadInspector.state(pid: pid, tid: tid)?.continuing(stall.lastState)
        if let reason = ptraceRefused[pid] {
            askForInProcessCapture(&stall.report, reason: reason)
            return
        }
        let capturedAt = monotonicNow()
        do {
            let stack = try sampler.capture(pid: pid, tid: tid)
            reply(.captured(identifier: identifier))
            let images = self.images(for: &stall, covering: stack.addresses)
            stall.report.samples.append(
                Sample(
                    frames: symbolicator.symbolicate(stack.addresses, images: images), capturedAt: capturedAt,
                    stoppedNanoseconds: stack.stoppedNanoseconds, threadState: stall.lastState))
        } catch {
            switch error {
            case .permissionDenied(let code):
                let reason = PtraceAdvice.explain(errno: code, pid: pid)
                ptraceRefused[pid] = reason
                askForInProcessCapture(&stall.report, reason: reason)
            case .processExited:
                // Not reaped by the sampler: the poll loop collects the workload's status as usual.
                noteCaptureFailure(&stall.report, "the process exited while its stack was being captured")
            case .noSuchThread:
                noteCaptureFailure(&stall.report, "the thread was gone before its stack could be captured")
                reply(.captured(identifier: identifier))
            case .failed(let reason):
                askForInProcessCapture(&stall.report, reason: "ptrace capture failed (\(reason))")
            }
        }
    }

    /// The process's image map: the stall's, else the process's last one if it still covers every address
    /// (libraries rarely come and go), else a fresh one — read right away, as the process may exit any time.
    private func images(for stall: inout OpenStall, covering addresses: [UInt64]) -> ProcessImages {
        let pid = stall.report.pid
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

    /// Finishes a stall: its CPU share, then the report.
    private func close(_ stall: inout OpenStall) {
        var cpuPercent: Double?
        if let baseline = stall.cpuAtDetection,
            let cpu = ThreadInspector.cpuTime(pid: stall.report.pid, tid: stall.report.tid)
        {
            // Up to the stall's end, not to now: the end message arrives up to a threshold later.
            let end = stall.report.end ?? monotonicNow()
            let wall = end > baseline.wall ? end - baseline.wall : 0
            // Below ~50 ms the 10 ms tick makes the share meaningless.
            if wall >= 50_000_000 {
                cpuPercent = min(100, Double(cpu - min(cpu, baseline.cpu)) / Double(wall) * 100)
            }
        }
        stall.report.threadActivity = ThreadActivity(
            cpuPercent: cpuPercent, states: stall.report.samples.compactMap(\.threadState))
        output.write(stall.report)
        finished.append(stall.report)
    }

    private func noteCaptureFailure(_ report: inout StallReport, _ note: String) {
        if report.samples.isEmpty { report.captureMethod = .none }
        report.captureNote = note
    }

    private func askForInProcessCapture(_ stall: inout StallReport, reason: String) {
        guard socket != nil else {
            // External mode: no agent to capture in-process.
            noteCaptureFailure(&stall, reason)
            return
        }
        stall.captureMethod = .signal
        stall.captureNote =
            reason
            + "; captured in-process with a signal instead, which can cut a blocking sleep in the workload short"
        reply(.captureInProcess(identifier: stall.identifier, reason: reason))
    }

    private func reply(_ message: CollectorMessage) {
        guard let socket else { return }
        let bytes = WireFormat.encode(message)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    private func handleSignals() {
        guard case .child(let workload) = target else {
            // Attached: a signal to stallwatch ends the session; the process itself is never signalled.
            for received in signals.drain() where received.signal != SIGCHLD { ending = .signal(received.signal) }
            return
        }
        for received in signals.drain() where received.signal != SIGCHLD {
            // A terminal's Ctrl-C already reached the workload (same process group); forward only what
            // another process sent to stallwatch alone, so the workload sees each signal once.
            if received.fromProcess { kill(workload.pid, received.signal) }
            interrupted = true
        }
    }

    /// `--timeout`: past the deadline, SIGTERM the workload; past the grace period, SIGKILL it.
    private func enforceTimeout() {
        guard exitStatus == nil, case .child(let workload) = target, let deadline = timeoutDeadline else { return }
        let now = monotonicNow()
        if !timedOut, now >= deadline {
            timedOut = true
            kill(workload.pid, SIGTERM)
            killDeadline = now + Self.terminationGrace
        } else if let killAt = killDeadline, now >= killAt {
            kill(workload.pid, SIGKILL)
            killDeadline = nil
        }
    }

    /// How long a workload gets to exit after SIGTERM before SIGKILL.
    static let terminationGrace: UInt64 = 5_000_000_000

    private func reapWorkload() {
        guard exitStatus == nil, case .child(let workload) = target else { return }
        var status: Int32 = 0
        let result = waitpid(workload.pid, &status, WNOHANG)
        // A late ptrace stop (after a capture timed out) is reported here too: not an exit.
        let stopped = status & 0xff == 0x7f
        if result == workload.pid, !stopped { exitStatus = status }
        if result < 0, errno == ECHILD { exitStatus = exitStatus ?? 0 }
    }

    static func processName(_ pid: Int32) -> String {
        let comm = FileBytes.text("/proc/\(pid)/comm")?.trimmingWhitespace()
        return comm.flatMap { $0.isEmpty ? nil : $0 } ?? "pid \(pid)"
    }
}

