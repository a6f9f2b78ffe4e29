// The kernel trace source's handle: CStallwatchTrace's BPF program loaded once per watch, and what it keeps for each
// thread it follows.
import CStallwatchTrace
import Glibc
import StallwatchCore

/// The loaded and attached trace program. Closing it (or stallwatch's exit, however it happens) detaches it.
final class KernelTrace {
    /// Why the trace could not be had, in a sentence with what to do.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    private let handle: OpaquePointer

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        sw_trace_close(handle)
    }

    /// Loads and attaches the program.
    static func open() -> Result<KernelTrace, Unavailable> {
        var handle: OpaquePointer?
        var error = [CChar](repeating: 0, count: 256)
        let code = sw_trace_open(&handle, &error, error.count)
        guard code == 0, let handle else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let advice =
                code == -EPERM || code == -EACCES
                ? "; tracing needs root, or CAP_BPF and CAP_PERFMON (in a container, also a seccomp profile that allows"
                    + " bpf)"
                : ""
            return .failure(Unavailable(description: "kernel tracing is not available: \(reason)\(advice)"))
        }
        return .success(KernelTrace(handle: handle))
    }

    /// Starts following `tid` (its id as this process sees it, which for stallwatch is the kernel's initial one
    /// unless it runs in a pid namespace of its own). False when the kernel refused (too many threads).
    func watch(tid: Int32) -> Bool {
        guard sw_trace_watch(handle, tid) == 0 else { return false }
        followed += 1
        return true
    }

    /// Records that `tid`, not seen to move yet, rests in its loop's wait now.
    func markWaiting(tid: Int32) {
        _ = sw_trace_mark_waiting(handle, tid)
    }

    func unwatch(tid: Int32) {
        followed = max(0, followed - 1)
        sw_trace_unwatch(handle, tid)
    }

    private var batchTids: [UInt32] = []
    private var batchStates: [sw_trace_state] = []

    /// Threads followed now.
    private(set) var followed = 0

    /// Every followed thread's state, read in one batch: what the kernel recorded at one moment for all of them.
    func states() -> [Int32: sw_trace_state] {
        // Room for the threads followed and a few more: the kernel sizes its own buffers by what is asked for.
        let capacity = min(Int(SW_TRACE_MAX_THREADS), followed + 64)
        if batchTids.count < capacity {
            batchTids = [UInt32](repeating: 0, count: capacity)
            batchStates = [sw_trace_state](repeating: sw_trace_state(), count: capacity)
        }
        let count = batchTids.withUnsafeMutableBufferPointer { tids in
            batchStates.withUnsafeMutableBufferPointer { states in
                sw_trace_read_all(handle, tids.baseAddress, states.baseAddress, UInt32(capacity))
            }
        }
        guard count > 0 else { return [:] }
        // Refilled in place: the previous reading is released by now, so its storage is reused, not reallocated.
        var byThread = lastStates
        lastStates = [:]
        byThread.removeAll(keepingCapacity: true)
        byThread.reserveCapacity(Int(count))
        for index in 0..<Int(count) { byThread[Int32(bitPattern: batchTids[index])] = batchStates[index] }
        lastStates = byThread
        return byThread
    }

    /// The last reading's table, kept for its storage.
    private var lastStates: [Int32: sw_trace_state] = [:]

    /// Tells the program `tid`'s loop wait (0: any) and the epoch whose first move it records.
    func control(tid: Int32, loopIdentity: UInt64, epoch: UInt64) {
        _ = sw_trace_control(handle, tid, sw_trace_control(loop_identity: loopIdentity, epoch: epoch))
    }
}

extension KernelTrace {
    /// The trace `source` asks for, when threads are to be watched from outside (`wanted`): none for `proc` and
    /// `agent`; for `kernel` the trace, or an error saying why not; for `auto` the trace if it can be had, else `/proc`
    /// sampling and a warning saying why.
    static func forSource(_ source: LoopSource, wanted: Bool) throws(StallwatchError) -> (
        trace: KernelTrace?, warning: String?
    ) {
        guard wanted, source == .kernel || source == .auto else { return (nil, nil) }
        switch open() {
        case .success(let trace): return (trace, nil)
        case .failure(let unavailable) where source == .kernel:
            throw StallwatchError(
                message: "--source kernel: \(unavailable); --source proc samples /proc instead",
                exitCode: ExitCode.permissionDenied)
        case .failure(let unavailable): return (nil, fallbackWarning(unavailable))
        }
    }

    /// What the summary says when `/proc` is sampled because the trace could not be had.
    static func fallbackWarning(_ unavailable: Unavailable) -> String {
        "\(unavailable); threads watched from outside are sampled from /proc (times within a threshold)"
    }
}

/// The kernel's records of every followed thread, read at most once per wake, and only if a followed thread is due.
final class KernelReading {
    private let trace: KernelTrace?
    private lazy var states: [Int32: sw_trace_state] = trace?.states() ?? [:]

    init(_ trace: KernelTrace?) {
        self.trace = trace
    }

    /// `tid`'s record; nil when it is not followed.
    func state(of tid: Int32) -> sw_trace_state? { states[tid] }
}
