// Reads a thread's scheduler state and CPU time from /proc, to tell computing from waiting.
import FoundationEssentials
import Glibc

/// What `/proc/PID/task/TID` says about one thread.
public enum ThreadInspector {
    /// Clock ticks per second for `utime`/`stime` in `stat`.
    public static let ticksPerSecond = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))

    /// The thread's state, and the syscall (or kernel wait channel) it is blocked in.
    ///
    /// Read it before stopping the thread: a ptrace stop changes the state to `t`. The syscall file needs
    /// ptrace permission; `wchan` does not, and stands in for it.
    /// - Parameter waitChannelAlways: read `wchan` even when `syscall` names the call (reports show both); without it,
    ///   only where `syscall` is unreadable, which saves a read per sample when many threads are watched.
    public static func state(pid: Int32, tid: Int32, waitChannelAlways: Bool = true) -> ThreadState? {
        guard let fields = statFields(pid: pid, tid: tid), let state = fields.first?.first else { return nil }
        guard state != "R" else { return ThreadState(state: state) }
        let directory = "/proc/\(pid)/task/\(tid)"
        // `running` while on a CPU, `-1 …` when not in a system call: no name either way.
        let syscall = FileBytes.text(directory + "/syscall")?.split(separator: " ").first.flatMap { Int($0) }
        guard waitChannelAlways || syscall == nil else {
            return ThreadState(state: state, syscall: syscall.flatMap(SyscallNames.name))
        }
        let waitChannel = FileBytes.text(directory + "/wchan").flatMap { $0.isEmpty || $0 == "0" ? nil : $0 }
        return ThreadState(state: state, syscall: syscall.flatMap(SyscallNames.name), waitChannel: waitChannel)
    }

    /// Nanoseconds the thread has waited on a run queue so far (runnable, but another thread had the CPU): the
    /// scheduler's count in `schedstat`; nil where the kernel keeps none.
    public static func runQueueTime(pid: Int32, tid: Int32) -> UInt64? {
        guard let schedstat = FileBytes.text("/proc/\(pid)/task/\(tid)/schedstat") else { return nil }
        let fields = schedstat.split(separator: " ")
        guard fields.count >= 2, let onCPU = UInt64(fields[0]), onCPU > 0 else { return nil }
        return UInt64(fields[1])
    }

    /// CPU time of the thread so far, in nanoseconds: the scheduler's exact count from `schedstat`, or
    /// user plus system time from `stat` (10 ms ticks) where the kernel does not keep schedstat.
    public static func cpuTime(pid: Int32, tid: Int32) -> UInt64? {
        if let schedstat = FileBytes.text("/proc/\(pid)/task/\(tid)/schedstat"),
            let onCPU = schedstat.split(separator: " ").first.flatMap({ UInt64($0) }), onCPU > 0
        {
            return onCPU
        }
        guard let fields = statFields(pid: pid, tid: tid), fields.count > 12,
            let user = UInt64(fields[11]), let system = UInt64(fields[12])
        else { return nil }
        return (user + system) * 1_000_000_000 / ticksPerSecond
    }

    /// The thread's name as the program set it (`comm`, at most 15 bytes), or nil once it is gone.
    public static func name(pid: Int32, tid: Int32) -> String? {
        // A name may itself start or end with spaces: only the line break goes.
        FileBytes.text("/proc/\(pid)/task/\(tid)/comm").map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 }
    }

    /// The processes `pid`'s threads started (each thread's `/proc/PID/task/TID/children`), oldest thread first.
    public static func children(of pid: Int32) -> [Int32] {
        threads(pid: pid).flatMap { tid in
            (FileBytes.text("/proc/\(pid)/task/\(tid)/children") ?? "").split(separator: " ").compactMap { Int32($0) }
        }
    }

    /// The process's name for reports: `/proc/PID/comm`, or `pid N` when it cannot be read.
    public static func processName(pid: Int32) -> String {
        let comm = FileBytes.text("/proc/\(pid)/comm")?.trimmingWhitespace()
        return comm.flatMap { $0.isEmpty ? nil : $0 } ?? "pid \(pid)"
    }

    /// The thread of `pid` that an agent inside it calls `agentThread`, where the agent's own pid is `agentPid`.
    ///
    /// Inside a container the agent counts in its own pid namespace; each thread's `NSpid` line in `/proc` names
    /// it in both. Nil when the process has no such thread.
    public static func thread(of pid: Int32, agentThread: Int32, agentPid: Int32) -> Int32? {
        if agentThread == agentPid { return pid }
        let nested = FileBytes.text("/proc/\(pid)/status").map { $0.contains("NSpid:\t\(pid)\t") } ?? false
        if !nested {
            return FileBytes.text("/proc/\(pid)/task/\(agentThread)/stat") != nil ? agentThread : nil
        }
        for tid in threads(pid: pid) {
            let line = FileBytes.text("/proc/\(pid)/task/\(tid)/status")?.split(separator: "\n")
                .first { $0.hasPrefix("NSpid:") }
            if let line, line.split(whereSeparator: \.isWhitespace).last == Substring(String(agentThread)) {
                return tid
            }
        }
        return nil
    }

    /// The process's thread ids: the main thread first, then the others in ascending order.
    public static func threads(pid: Int32) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let others = names.compactMap { Int32($0) }.filter { $0 != pid }.sorted()
        return names.contains(String(pid)) ? [pid] + others : others
    }

    /// The fields of `stat` after the command name (which may itself contain spaces and parentheses):
    /// index 0 is the state (field 3), index 11 `utime` (field 14), index 12 `stime` (field 15).
    public static func statFields(pid: Int32, tid: Int32) -> [Substring]? {
        guard let text = FileBytes.text("/proc/\(pid)/task/\(tid)/stat"),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
}

extension ThreadInspector {
    /// The process a thread id belongs to (`Tgid` in `/proc/TID/status`); nil when no such thread exists.
    public static func process(ofThread tid: Int32) -> Int32? {
        let line = FileBytes.text("/proc/\(tid)/status")?.split(separator: "\n").first { $0.hasPrefix("Tgid:") }
        return line?.split(whereSeparator: \.isWhitespace).last.flatMap { Int32($0) }
    }

    /// Why a `--thread TID` cannot name a thread of `pid` (nil for `run`'s child, not started yet): the tid belongs to
    /// another process. A tid that exists nowhere may still be given to a thread later, and is not refused.
    public static func foreignThreadProblem(_ selectors: [ThreadSelector], pid: Int32?) -> String? {
        for case .tid(let tid) in selectors {
            guard let owner = process(ofThread: tid), owner != pid else { continue }
            let whose = pid.map { "not of pid \($0)" } ?? "not of the command stallwatch starts"
            return "--thread \(tid) is a thread of pid \(owner) (\(processName(pid: owner))), \(whose)"
        }
        return nil
    }
}
