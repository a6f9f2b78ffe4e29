// Capturing the main thread's stack from inside the workload, when the collector may not ptrace it.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchImages

/// The in-process fallback capture: a signal to the main thread, whose handler unwinds with libunwind.
///
/// It interrupts whatever the thread is doing, so a blocking sleep in the workload can return early
/// (`EINTR`); the collector prefers ptrace and uses this only when ptrace is not permitted.
enum InProcessCapture {
    struct Result {
        var addresses: [UInt64]
        /// Where each frame may keep a Swift async context, read in the handler (one per address).
        var asyncHints: [AsyncContextHint] = []
        var capturedAt: UInt64
        var stoppedNanoseconds: UInt64?
        var error: String?
    }

    nonisolated(unsafe) private static var prepared: Bool?
    nonisolated(unsafe) private static var preparationError: String?

    /// Captures thread `tid` of this process. Call from the watcher thread only.
    static func capture(tid: Int32, maxFrames: Int = WatchSettings().inProcessMaxFrames) -> Result {
        let now = sw_agent_now_ns()
        if prepared == nil {
            let status = sw_agent_capture_prepare(sw_agent_default_capture_signal())
            prepared = status == 0
            if status != 0 { preparationError = sw_agent_capture_error().map { String(cString: $0) } }
        }
        guard prepared == true else {
            return Result(addresses: [], capturedAt: now, error: preparationError ?? "in-process capture unavailable")
        }
        var buffer = [UInt64](repeating: 0, count: maxFrames)
        var hints = [UInt64](repeating: 0, count: 2 * maxFrames)
        var stopped: UInt64 = 0
        let count = buffer.withUnsafeMutableBufferPointer { pointer in
            hints.withUnsafeMutableBufferPointer { hints in
                sw_agent_capture_thread(tid, pointer.baseAddress, hints.baseAddress, Int32(maxFrames), 1000, &stopped)
            }
        }
        guard count > 0 else {
            let reason = sw_agent_capture_error().map { String(cString: $0) } ?? "error \(count)"
            return Result(addresses: [], capturedAt: now, error: "in-process capture failed: \(reason)")
        }
        let frames = Int(count)
        return Result(
            addresses: Array(buffer.prefix(frames)),
            asyncHints: (0..<frames).map { AsyncContextHint(frameRecord: hints[2 * $0], register: hints[2 * $0 + 1]) },
            capturedAt: now, stoppedNanoseconds: stopped)
    }
}
