// Why a remote capture failed, as a typed error the CLI can turn into advice.

/// Why `RemoteStackSampler.capture` could not take a stack.
public enum RemoteCaptureError: Error, Sendable, Equatable {
    /// `PTRACE_SEIZE` was refused (`errno` is EPERM or EACCES): another user's process without
    /// `CAP_SYS_PTRACE`, Yama's `kernel.yama.ptrace_scope`, or the process is already being traced
    /// (a debugger, strace, another stallwatch).
    case permissionDenied(errno: Int32)
    /// No such process or thread, or the thread of a zombie this process is not the parent of.
    case noSuchThread
    /// The thread exited or was killed before or during the capture. `waitStatus` is the raw
    /// `waitpid` status. The process was not reaped: its parent still collects the same status.
    case processExited(waitStatus: Int32)
    /// Anything else (for example the thread did not stop within the timeout), described.
    case failed(String)
}

extension RemoteCaptureError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .permissionDenied(let code):
            // What to change depends on the process and the system: the collector's diagnosis says it.
            return "ptrace was not permitted (errno \(code))"
        case .noSuchThread:
            return "no such process or thread"
        case .processExited(let status):
            let low = status & 0x7f
            if low == 0 { return "the process exited with status \((status >> 8) & 0xff)" }
            return "the process was killed by signal \(low)"
        case .failed(let reason):
            return reason
        }
    }
}
