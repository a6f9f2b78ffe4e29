// Writes report records on a thread of its own, so that a reader that stops reading (a full pipe, a FIFO nobody
// reads) never holds up the collector's poll loop: timeouts, signals and captures keep their timing.
import Dispatch
import Glibc
import StallwatchSystem
import Synchronization

/// A bounded queue of rendered records and the thread that writes them, in order, as soon as they come.
///
/// While the reader keeps up, each record is written moments after it is rendered. When the queue holds more than
/// ``capacity`` bytes, further records are dropped and counted; when a write fails (a closed pipe, a full disk),
/// writing stops. Either way the watched process keeps running, and the exit status says reports were lost.
final class RecordWriter: Sendable {
    /// How much may wait for a slow reader: about a hundred thousand stall records.
    static let capacity = 8 << 20

    private struct State {
        var queue: [[UInt8]] = []
        var queuedBytes = 0
        var closing = false
        var dropped = 0
        var failure: SystemError?
        var warnedAboutDropping = false
    }

    private let descriptor: Int32
    /// `--rotate`: the file written instead of ``descriptor``.
    private let rotating: RotatingFile?
    private let state = Mutex(State())
    private let pending = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Said once when writing fails or records start being dropped (what keeps running: the workload, the process).
    private let warn: @Sendable (String) -> Void

    init(descriptor: Int32, rotating: RotatingFile? = nil, warn: @escaping @Sendable (String) -> Void) {
        self.descriptor = descriptor
        self.rotating = rotating
        self.warn = warn
        // A queue of its own: its one thread may block in write(2) for as long as the reader takes.
        DispatchQueue(label: "stallwatch-writer").async { [self] in run() }
    }

    /// Queues a record; it is dropped (and counted) if the reader is too far behind.
    func enqueue(_ text: String) {
        guard !text.isEmpty else { return }
        let bytes = Array(text.utf8)
        let firstDrop = state.withLock { state -> Bool in
            guard state.failure == nil, !state.closing else { return false }
            guard state.queuedBytes + bytes.count <= Self.capacity else {
                state.dropped += 1
                defer { state.warnedAboutDropping = true }
                return !state.warnedAboutDropping
            }
            state.queue.append(bytes)
            state.queuedBytes += bytes.count
            return false
        }
        if firstDrop {
            warn("the reader of the reports is not keeping up: records are dropped until it catches up")
        }
        pending.signal()
    }

    /// Records dropped for a slow reader so far.
    var dropped: Int { state.withLock { $0.dropped } }
    /// The write that failed, if one did.
    var failure: SystemError? { state.withLock { $0.failure } }

    /// Waits for everything queued to be written, up to `milliseconds`; false if some of it was not (the reader
    /// never read it, or a write failed).
    func finish(waitingUpTo milliseconds: Int) -> Bool {
        state.withLock { $0.closing = true }
        pending.signal()
        let drained = finished.wait(timeout: .now() + .milliseconds(milliseconds)) == .success
        return drained && state.withLock { $0.failure == nil && $0.dropped == 0 }
    }

    private func run() {
        while true {
            pending.wait()
            let (batch, closing) = state.withLock { state in
                defer {
                    state.queue.removeAll()
                    state.queuedBytes = 0
                }
                return (state.queue, state.closing)
            }
            for record in batch where failure == nil {
                do {
                    if let rotating {
                        try rotating.write(record, warn: warn)
                    } else {
                        try FileDescriptor.writeAll(record, to: descriptor)
                    }
                } catch {
                    state.withLock { $0.failure = error }
                    warn("cannot write reports (\(error.reason))")
                }
            }
            if closing, state.withLock({ $0.queue.isEmpty }) {
                finished.signal()
                return
            }
        }
    }
}
