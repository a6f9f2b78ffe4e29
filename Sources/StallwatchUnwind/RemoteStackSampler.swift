// Captures another process's thread stacks with ptrace + libunwind, stopping the thread for a
// fraction of a millisecond. The Swift face of the CStallwatchUnwind shim.
import CStallwatchUnwind
import Glibc

/// One thread's stack, captured from outside its process.
public struct RemoteStack: Sendable {
    /// Frame addresses in the target's address space, innermost first. `addresses[0]` is the
    /// program counter where the thread was stopped; every later entry is a return address (the
    /// instruction after a call), so a symbolicator should look up `address - 1` for those.
    public var addresses: [UInt64]
    /// How long the thread was stopped: from just before `PTRACE_INTERRUPT` to just after
    /// `PTRACE_DETACH`. An upper bound: it includes `stopWaitNanoseconds`.
    public var stoppedNanoseconds: UInt64
    /// The part of `stoppedNanoseconds` spent waiting for the thread to reach its stop, during
    /// which it still ran (or waited for a CPU). The rest is the unwind and the detach.
    public var stopWaitNanoseconds: UInt64
    /// The whole capture, including the per-process preparation done before stopping the thread.
    public var totalNanoseconds: UInt64
    /// A frame lay in the target's vDSO (e.g. inside `clock_gettime`) and was unwound through.
    public var reachedVDSO: Bool
    /// libunwind's error code (a negative `UNW_E*`) if the walk ended before the outermost frame,
    /// 0 if it ended normally or at `maxFrames`.
    public var unwindError: Int32
    /// Frames whose unwind table came from the image's file rather than the target's memory (``RemoteStackSampler/Tables``).
    public var fileTableLookups: Int = 0
    /// Per frame, the word a Swift async frame record holds below the frame pointer (0 where the frame has no
    /// record), read while the thread was stopped: where an async function running there keeps its context.
    public var frameRecordContexts: [UInt64] = []
    /// Per frame, r14 as the unwinder recovered it: where the swiftasync convention passes the context.
    public var r14Values: [UInt64] = []
    /// A stack deeper than `maxFrames`: how many frames were left out after the first ``innerFrameCount`` addresses
    /// (the rest are the outermost); 0 when the stack is whole.
    public var omittedFrames: Int = 0
    public var innerFrameCount: Int { addresses.count - outerFrameCount }
    public var outerFrameCount: Int = 0
    /// The walk stopped at its bound (``RemoteStackSampler/walkLimit`` frames), short of the thread's start.
    public var walkLimited = false
    /// The bound the walk stopped at, when it did.
    public var walkLimitReached: Int? { walkLimited ? RemoteStackSampler.walkLimit : nil }

    public init(
        addresses: [UInt64],
        stoppedNanoseconds: UInt64,
        totalNanoseconds: UInt64,
        reachedVDSO: Bool,
        stopWaitNanoseconds: UInt64 = 0,
        unwindError: Int32 = 0,
        fileTableLookups: Int = 0
    ) {
        self.addresses = addresses
        self.stoppedNanoseconds = stoppedNanoseconds
        self.stopWaitNanoseconds = stopWaitNanoseconds
        self.totalNanoseconds = totalNanoseconds
        self.reachedVDSO = reachedVDSO
        self.unwindError = unwindError
        self.fileTableLookups = fileTableLookups
    }
}

/// Takes stacks of threads in other processes.
///
/// Keeps libunwind's caches between captures, so the second and later captures of a process stop
/// its thread for tens of microseconds instead of milliseconds. Capturing another process flushes
/// them. Use one sampler from one thread at a time: it is not thread-safe.
///
/// Waiting: while a thread is being captured, the calling process is its ptrace tracer, and any
/// `waitpid` in this process that covers it (such as a reaper thread blocked in `waitpid(pid, ..., 0)`,
/// which reports ptrace stops of traced children even without `WUNTRACED`) could take the stop
/// notification the sampler waits for. Reap children with `__WNOTHREAD` from the thread that
/// spawned them, or serialize reaping with captures.
public final class RemoteStackSampler {
    /// The most frames a capture walks (the unwinder's `SW_REMOTE_WALK_LIMIT`): a bound on how long the thread stays
    /// stopped.
    public static let walkLimit = Int(SW_REMOTE_WALK_LIMIT)

    /// The most frames a capture records unless asked otherwise.
    public static let defaultMaxFrames = 256

    /// Where the unwind tables of the target's images are read.
    public enum Tables: Sendable {
        /// Each image's file is opened and mapped before the first capture of a process: preparing costs a few
        /// milliseconds, and every later capture reads its tables locally. For watching a process.
        case openedFiles
        /// From the target's own memory, opening no files (an image without a loaded table is still opened): preparing
        /// costs a few small reads per image, and each capture reads the tables it needs while the thread is stopped,
        /// adding tens of microseconds to the stop. For one capture.
        case targetMemory
    }

    private var sampler: OpaquePointer?
    private let tables: Tables

    public init(tables: Tables = .openedFiles) {
        self.tables = tables
    }

    deinit {
        if let sampler { sw_remote_sampler_destroy(sampler) }
    }

    /// Stops thread `tid` of process `pid`, records its stack and lets it run again.
    ///
    /// - Parameters:
    ///   - pid: The process; its caches are kept until another pid is captured.
    ///   - tid: The thread (equal to `pid` for the main thread).
    ///   - maxFrames: The most frames to record.
    ///   - timeout: How long to wait for the thread to stop. A thread in uninterruptible sleep
    ///     (disk I/O, `vfork`) stops only when it leaves it. On timeout the capture fails and the
    ///     thread is released once it stops: by the next capture (which fails until then) or by
    ///     deinit (which waits up to 1 s). ptrace binds a tracee to the tracing thread, so both
    ///     must run on the thread that timed out.
    /// - Throws: `RemoteCaptureError`. `processExited` leaves the process unreaped: a parent still
    ///   collects the same status with `waitpid`.
    public func capture(
        pid: Int32,
        tid: Int32,
        maxFrames: Int = RemoteStackSampler.defaultMaxFrames,
        timeout: Duration = .seconds(1)
    ) throws(RemoteCaptureError) -> RemoteStack {
        if sampler == nil {
            sampler = sw_remote_sampler_create()
            if let sampler, tables == .targetMemory { sw_remote_sampler_read_tables_from_memory(sampler) }
        }
        guard let sampler else { throw .failed("cannot create a libunwind address space") }

        let capacity = max(1, min(maxFrames, 4096))
        let components = timeout.components
        let milliseconds = Int32(clamping: components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
        var result = sw_remote_result()
        var hints = [UInt64](repeating: 0, count: 2 * capacity)
        let addresses = [UInt64](unsafeUninitializedCapacity: capacity) { buffer, count in
            hints.withUnsafeMutableBufferPointer { hints in
                _ = sw_remote_capture(
                    sampler, pid, tid, buffer.baseAddress, hints.baseAddress, Int32(capacity), max(1, milliseconds),
                    &result)
            }
            count = result.status == SW_REMOTE_OK ? Int(result.frame_count) : 0
        }

        switch result.status {
        case SW_REMOTE_OK:
            var stack = RemoteStack(
                addresses: addresses,
                stoppedNanoseconds: result.stopped_ns,
                totalNanoseconds: result.total_ns,
                reachedVDSO: result.reached_vdso != 0,
                stopWaitNanoseconds: result.stop_wait_ns,
                unwindError: result.unwind_error,
                fileTableLookups: Int(result.file_table_lookups)
            )
            stack.frameRecordContexts = addresses.indices.map { hints[2 * $0] }
            stack.r14Values = addresses.indices.map { hints[2 * $0 + 1] }
            stack.omittedFrames = Int(result.omitted_frames)
            stack.outerFrameCount = Int(result.outer_frames)
            stack.walkLimited = result.walk_limited != 0
            return stack
        case SW_REMOTE_PERMISSION_DENIED:
            throw .permissionDenied(errno: result.error_number)
        case SW_REMOTE_NO_SUCH_THREAD:
            throw .noSuchThread
        case SW_REMOTE_EXITED:
            throw .processExited(waitStatus: result.wait_status)
        case SW_REMOTE_TIMED_OUT:
            throw .failed("thread \(tid) did not stop within \(timeout) (uninterruptible sleep?)")
        default:
            let call = result.failed_call.map { String(cString: $0) } ?? "capture"
            throw .failed("\(call): \(describe(errno: result.error_number))")
        }
    }

    /// Forgets cached unwind rules, for a target that may have unloaded and loaded code at
    /// addresses seen before.
    public func flush() {
        if let sampler { sw_remote_sampler_flush(sampler) }
    }
}

private func describe(errno code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return "\(String(cString: text)) (errno \(code))"
}
