// The agent's side of the socket to `stallwatch run`: it reports, the collector captures from outside.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchImages

/// Sends the watcher's findings to the stallwatch collector over the inherited `SOCK_SEQPACKET` socket.
///
/// On `stallBegan` it waits (bounded) for the collector's answer: usually "captured" (ptrace, from
/// outside), or "capture in-process" when ptrace was refused, in which case the agent captures the stack
/// itself and sends it with the process's image map.
final class CollectorSink: StallSink {
    private let socket: Int32
    private let pid = getpid()
    /// How long to wait for the collector's answer before capturing in-process anyway.
    private let answerTimeoutMilliseconds: Int32 = 2000
    private var broken = false
    /// The socket's identity when the agent started: a workload that closes its inherited descriptors (or `dup2`s
    /// over them) may reuse the number for a file or connection of its own, which must never receive a message.
    private let identity: (device: UInt64, inode: UInt64)?
    /// Stacks per stall, the first at detection.
    private let maxSamples: Int
    /// Frames per in-process stack.
    private let maxFrames: Int
    /// Each open stall's sampling: which of its moments (one per threshold) take a sample, and how many were taken.
    /// Several loops (`--thread`) may be stalled at once.
    private var sampling: [Int: (schedule: SampleSchedule, moment: Int, taken: Int)] = [:]
    /// The stall whose in-process samples already carried the image map.
    private var imagesSentFor: Int?

    init(socket: Int32, maxSamples: Int, maxFrames: Int = WatchSettings().maxFrames) {
        self.socket = socket
        self.maxSamples = maxSamples
        self.maxFrames = min(maxFrames, WatchSettings.inProcessFrameLimit)
        identity = Self.identity(of: socket)
        if identity == nil { broken = true }
    }

    private static func identity(of descriptor: Int32) -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// Whether the descriptor still is the collector's socket; once it is not, the sink stays silent for good
    /// (the collector, seeing its socket hang up, says so in its summary).
    private func stillConnected() -> Bool {
        guard !broken else { return false }
        guard let current = Self.identity(of: socket), let identity,
            current.device == identity.device, current.inode == identity.inode
        else {
            broken = true
            return false
        }
        return true
    }

    func send(_ message: AgentMessage) {
        guard stillConnected() else { return }
        let bytes = WireFormat.encode(message)
        let sent = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        // The collector is gone (EPIPE) or the socket is unusable: stop talking, never disturb the workload.
        if sent < 0, errno != EINTR { broken = true }
    }

    func watchingStarted(strategy: WatchStrategy) {
        send(.watching(pid: pid, tid: pid, strategy: strategy))
    }

    func loopThreadWatched(tid: Int32) {
        send(.watching(pid: pid, tid: tid, strategy: .runLoop))
    }

    func stallBegan(_ onset: StallOnset, thread: Int32?) {
        var schedule = SampleSchedule(maxSamples: maxSamples)
        _ = schedule.shouldSample(atMoment: 0)
        sampling[onset.identifier] = (schedule, 0, 1)
        send(.stallBegan(pid: pid, tid: thread ?? pid, onset: onset))
        sample(onset, thread: thread ?? pid)
    }

    func stallContinues(_ onset: StallOnset, thread: Int32?) {
        guard var state = sampling[onset.identifier] else { return }
        state.moment += 1
        let due = state.schedule.shouldSample(atMoment: state.moment)
        if due { state.taken += 1 }
        sampling[onset.identifier] = state
        guard due else { return }
        send(.stallSample(pid: pid, tid: thread ?? pid, identifier: onset.identifier, index: state.taken))
        sample(onset, thread: thread ?? pid)
    }

    /// Waits for the collector to capture from outside, or captures in-process when it asks (or is silent).
    /// The image map goes with a stall's first in-process sample only: it does not change during a stall.
    private func sample(_ onset: StallOnset, thread: Int32) {
        guard !broken else { return }
        let answer = awaitAnswer(for: onset.identifier)
        // The collector hung up (`stallwatch attach` detached, or stallwatch died): nobody would get the stack, and
        // capturing in-process would only disturb the program.
        if answer == nil, broken { return }
        switch answer {
        case .captured?: return
        case .captureInProcess?, nil:
            let result = InProcessCapture.capture(tid: thread, maxFrames: maxFrames)
            let sendImages = !result.addresses.isEmpty && imagesSentFor != onset.identifier
            let images = sendImages ? ProcessImages.captureCurrentProcess().encoded() : nil
            if sendImages { imagesSentFor = onset.identifier }
            send(
                .inProcessSample(
                    pid: pid, identifier: onset.identifier, addresses: result.addresses,
                    asyncCallers: InProcessAsyncCallers.find(addresses: result.addresses, hints: result.asyncHints),
                    capturedAt: result.capturedAt, imageMap: images.map { Data($0).base64EncodedString() },
                    error: result.error))
        }
    }

    func busyPeriods(_ histogram: LatencyHistogram) {
        send(.busyPeriods(pid: pid, buckets: histogram.sparse, maxNanoseconds: histogram.exactMaximum))
    }

    func stallEnded(_ onset: StallOnset, endedAt: UInt64) {
        sampling[onset.identifier] = nil
        send(.stallEnded(pid: pid, identifier: onset.identifier, endedAt: endedAt))
    }

    func frameRate(_ event: FrameRateMonitor.Event) {
        switch event {
        case .reading(let reading):
            send(
                .frameRate(
                    pid: pid, start: reading.start, end: reading.end, frames: reading.frames,
                    droppedNanoseconds: reading.dropped))
        case .drops(let record):
            send(
                .frameDrops(
                    pid: pid, begin: record.begin, end: record.end, totalNanoseconds: record.total,
                    droppedNanoseconds: record.dropped))
        }
    }

    /// The collector's answer about stall `identifier`; `nil` if none came in time.
    private func awaitAnswer(for identifier: Int) -> CollectorMessage? {
        guard stillConnected() else { return nil }
        let deadline = sw_agent_now_ns() + UInt64(answerTimeoutMilliseconds) * 1_000_000
        var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
        while true {
            let now = sw_agent_now_ns()
            guard now < deadline else { return nil }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0, errno == EINTR { continue }
            // Checked again before reading: what is read from a reused descriptor is the workload's, not ours.
            guard ready > 0, stillConnected() else { return nil }
            let received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if received <= 0 {
                if received < 0, errno == EINTR { continue }
                broken = true
                return nil
            }
            guard let answer = WireFormat.decode(CollectorMessage.self, from: buffer.prefix(received)) else { continue }
            switch answer {
            case .captured(let answered) where answered == identifier: return answer
            case .captureInProcess(let answered, _) where answered == identifier: return answer
            default: continue
            }
        }
    }
}
