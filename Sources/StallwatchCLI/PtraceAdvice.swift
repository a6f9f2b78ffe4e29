// Turns a refused ptrace into advice: what blocked it and how to allow it.
import FoundationEssentials
import Glibc
import StallwatchCore

/// Explains why ptrace was refused, in words that say what to change.
enum PtraceAdvice {
    static func explain(errno code: Int32, pid: Int32) -> String {
        let reason = "ptrace was not permitted on pid \(pid) (\(String(cString: strerror(code))))"
        return reason + "; " + cause(pid: pid)
    }

    /// The most likely cause, checked from the most specific to the most general.
    static func cause(pid: Int32) -> String {
        let ourUser = geteuid()
        var status = stat()
        if ourUser != 0, stat("/proc/\(pid)/mem", &status) == 0, status.st_uid == 0 {
            // A process's /proc files belong to root when it is not dumpable, whoever runs it.
            return "the process made itself non-dumpable (PR_SET_DUMPABLE 0, as hardened programs do),"
                + " so only root or a holder of CAP_SYS_PTRACE may trace it"
        }
        if let scope = yamaScope(), scope >= 1 {
            switch scope {
            case 1:
                return "kernel.yama.ptrace_scope is 1 (only ancestors may trace); run stallwatch as the"
                    + " workload's parent, or set it to 0: sudo sysctl kernel.yama.ptrace_scope=0"
            case 2: return "kernel.yama.ptrace_scope is 2 (admin only): run as root or grant CAP_SYS_PTRACE"
            default: return "kernel.yama.ptrace_scope is 3, which forbids ptrace until reboot"
            }
        }
        if ourUser != 0, stat("/proc/\(pid)", &status) == 0, status.st_uid != ourUser {
            return "the process belongs to another user: run stallwatch as that user or as root"
        }
        return "in a container, add the SYS_PTRACE capability (docker run --cap-add SYS_PTRACE);"
            + " a debugger or tracer already attached also prevents it"
    }

    /// `kernel.yama.ptrace_scope`, or nil when Yama is not enabled.
    static func yamaScope() -> Int? {
        FileBytes.text("/proc/sys/kernel/yama/ptrace_scope")
            .flatMap { Int($0.trimmingWhitespace()) }
    }
}
