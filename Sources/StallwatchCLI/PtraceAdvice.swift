// Turns a refused ptrace into advice: what blocked it and how to allow it.
import Foundation

/// Explains why ptrace was refused, in words that say what to change.
enum PtraceAdvice {
    static func explain(errno code: Int32, pid: Int32) -> String {
        var reason = "ptrace was not permitted on pid \(pid) (\(String(cString: strerror(code))))"
        if let scope = yamaScope(), scope >= 2 {
            reason += scope == 3
                ? "; kernel.yama.ptrace_scope is 3, which forbids ptrace until reboot"
                : "; kernel.yama.ptrace_scope is 2 (admin only): run as root or grant CAP_SYS_PTRACE"
        } else if geteuid() != 0 {
            reason += "; in a container, add the SYS_PTRACE capability (docker run --cap-add SYS_PTRACE)"
        }
        return reason
    }

    /// `kernel.yama.ptrace_scope`, or nil when Yama is not enabled.
    static func yamaScope() -> Int? {
        ProcFile.read("/proc/sys/kernel/yama/ptrace_scope")
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}
