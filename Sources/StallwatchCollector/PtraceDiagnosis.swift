// Why ptrace would be refused, and what to change: one ordered diagnosis for the preflight of `attach` and `stack`
// and for a capture refused during `run`.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchSystem

/// Why ptrace would fail, and what to change.
struct PtraceObstacle: Error {
    enum Cause: Equatable {
        case otherUser, setuid, notDumpable, yama(scope: Int), containerWithoutCapability, alreadyTraced
    }

    let cause: Cause
    let advice: String
}

/// The kernel's rules for ptrace, checked from `/proc`, worded once.
enum PtraceDiagnosis {
    /// `CAP_SYS_PTRACE`'s bit in the capability sets of `/proc/PID/status`.
    static let sysPtraceBit: UInt64 = 1 << 19

    /// The kernel's rules for `PTRACE_ATTACH`, checked from `/proc` in the order the kernel applies them, so the
    /// advice names the real obstacle: an existing tracer, Yama, then credentials and dumpability.
    static func obstacle(pid: Int32, name: String, status: ProcStatus) -> PtraceObstacle? {
        let ours = ProcStatus(pid: getpid())
        let capable = (ours?.capabilities("CapEff") ?? 0) & sysPtraceBit != 0
        let target = "pid \(pid) (\(name))"
        if let tracer = status.integer("TracerPid"), tracer != 0 {
            let tracerName = ThreadInspector.processName(pid: Int32(tracer))
            return PtraceObstacle(
                cause: .alreadyTraced,
                advice: "\(target) is already being traced by pid \(tracer) (\(tracerName)), and a process has only"
                    + " one tracer: detach that debugger or tracer first")
        }
        if let scope = yamaScope(), scope >= 1 {
            switch scope {
            case 1 where !capable && !Preflight.isDescendant(pid):
                return PtraceObstacle(
                    cause: .yama(scope: 1),
                    advice: "kernel.yama.ptrace_scope is 1: only a process's ancestors may trace it. Run stallwatch"
                        + " as root (sudo), allow it for now with 'sudo sysctl kernel.yama.ptrace_scope=0', or start"
                        + " the program with the agent listening (STALLWATCH_LISTEN=1), which lets 'stallwatch attach'"
                        + " trace it")
            case 2 where !capable:
                return PtraceObstacle(
                    cause: .yama(scope: 2),
                    advice: "kernel.yama.ptrace_scope is 2: only root (CAP_SYS_PTRACE) may trace; run stallwatch with"
                        + " sudo")
            case 3:
                return PtraceObstacle(
                    cause: .yama(scope: 3),
                    advice: "kernel.yama.ptrace_scope is 3: ptrace is disabled until the next reboot, for everyone")
            default:
                break
            }
        }
        guard !capable else { return nil }
        let uids = status.ids("Uid")
        let gids = status.ids("Gid")
        let ourUser = getuid()
        let ourGroup = getgid()
        if uids.prefix(3).contains(where: { $0 != ourUser }) || gids.prefix(3).contains(where: { $0 != ourGroup }) {
            if ourUser == 0 {
                return PtraceObstacle(
                    cause: .containerWithoutCapability,
                    advice: "stallwatch runs as root but without the CAP_SYS_PTRACE capability, as in a container"
                        + " started without it: add it (docker run --cap-add SYS_PTRACE; Kubernetes:"
                        + " securityContext.capabilities.add: [\"SYS_PTRACE\"]) and run stallwatch there again")
            }
            if let real = uids.first, real == ourUser {
                return PtraceObstacle(
                    cause: .setuid,
                    advice: "\(target) runs with another user's or group's privileges (a setuid or setgid program),"
                        + " which only root may trace: run stallwatch with sudo")
            }
            let owner = uids.count > 1 ? uids[1] : uids.first ?? 0
            return PtraceObstacle(
                cause: .otherUser,
                advice: "\(target) belongs to user \(Preflight.userName(owner)) (uid \(owner)), and stallwatch runs as"
                    + " \(Preflight.userName(ourUser)) (uid \(ourUser)): run it as that user (sudo -u \(Preflight.userName(owner))"
                    + " stallwatch ...) or as root (sudo stallwatch ...)")
        }
        var memory = stat()
        // A process's /proc files belong to root when it is not dumpable, whoever runs it.
        if ourUser != 0, stat("/proc/\(pid)/mem", &memory) == 0, memory.st_uid == 0 {
            return PtraceObstacle(
                cause: .notDumpable,
                advice: "\(target) made itself non-dumpable (PR_SET_DUMPABLE 0, as hardened programs do), so only"
                    + " root may trace it: run stallwatch with sudo")
        }
        return nil
    }

    /// A refused `PTRACE_SEIZE` explained: what happened, then the obstacle the checks find (or what else can cause
    /// it in a container or under a debugger).
    static func refusal(errno code: Int32, pid: Int32) -> String {
        let advice =
            ProcStatus(pid: pid).flatMap {
                obstacle(pid: pid, name: ThreadInspector.processName(pid: pid), status: $0)
            }?
            .advice
            ?? "in a container, add the SYS_PTRACE capability (docker run --cap-add SYS_PTRACE); a debugger or tracer"
            + " already attached also prevents it"
        return "ptrace was not permitted on pid \(pid) (\(SystemError.describe(code))); \(advice)"
    }

    /// `kernel.yama.ptrace_scope`, or nil when Yama is not enabled.
    static func yamaScope() -> Int? {
        FileBytes.text("/proc/sys/kernel/yama/ptrace_scope").flatMap { Int($0.trimmingWhitespace()) }
    }
}
