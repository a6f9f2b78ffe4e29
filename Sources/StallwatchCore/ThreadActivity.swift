// What the main thread was doing during a stall: computing, or waiting, and on what.

/// The main thread's scheduler state at one sample, read from `/proc/PID/task/TID/{stat,syscall,wchan}`.
public struct ThreadState: Equatable, Sendable {
    /// The state letter from `stat`: `R` running, `S` sleeping, `D` uninterruptible, ...
    public var state: Character
    /// The system call the thread was blocked in, by name (`futex`, `nanosleep`, ...), where readable.
    public var syscall: String?
    /// The kernel function it was waiting in (`wchan`), where `syscall` was not readable.
    public var waitChannel: String?

    public init(state: Character, syscall: String? = nil, waitChannel: String? = nil) {
        self.state = state
        self.syscall = syscall
        self.waitChannel = waitChannel
    }

    public var isRunning: Bool { state == "R" }

    /// This state, with the interrupted call named when the kernel shows `restart_syscall`.
    ///
    /// Stopping a thread with ptrace interrupts its sleep or wait, which the kernel then resumes through
    /// `restart_syscall` with the remaining time (so the workload sees no difference); the call it is
    /// really in is the one the previous sample saw.
    public func continuing(_ previous: ThreadState?) -> ThreadState {
        guard syscall == "restart_syscall", let previous, !previous.isRunning else { return self }
        var resolved = self
        resolved.syscall = previous.syscall
        resolved.waitChannel = previous.waitChannel
        return resolved
    }

    /// What a blocked thread is waiting for, in a reader's words; nil while running.
    public var waitReason: WaitReason? {
        guard !isRunning else { return nil }
        // `restart_syscall` is a call a ptrace stop interrupted (a sleep, a timed wait): its wait channel says which.
        if let syscall, syscall != "restart_syscall" { return WaitReason(syscall: syscall) }
        if let waitChannel { return WaitReason(waitChannel: waitChannel) }
        return .other
    }

    /// The call to name for what the thread waits in: its system call, or its wait channel where the call is unknown
    /// or only `restart_syscall`.
    public var waitingCall: String? {
        if let syscall, syscall != "restart_syscall" { return syscall }
        return waitChannel ?? syscall
    }
}

/// Why a blocked thread is not running.
public enum WaitReason: String, Sendable, Equatable {
    /// A futex: a mutex, condition variable, semaphore or `DispatchSemaphore`/`DispatchGroup` wait.
    case lock
    /// A sleep (`usleep`, `nanosleep`, `Thread.sleep`).
    case sleep
    /// Waiting for input or output: read, poll, select, epoll, socket calls.
    case io
    /// Waiting for a child process.
    case child
    case other

    init(syscall: String) {
        switch syscall {
        case "futex", "futex_waitv": self = .lock
        case "nanosleep", "clock_nanosleep": self = .sleep
        case "read", "readv", "pread64", "poll", "ppoll", "select", "pselect6", "epoll_wait", "epoll_pwait",
            "epoll_pwait2", "recvfrom", "recvmsg", "accept", "accept4", "connect", "write", "writev", "sendto",
            "sendmsg", "fsync", "fdatasync", "openat", "io_getevents":
            self = .io
        case "wait4", "waitid": self = .child
        default: self = .other
        }
    }

    init(waitChannel: String) {
        if waitChannel.contains("futex") {
            self = .lock
        } else if waitChannel.contains("nanosleep") || waitChannel.contains("hrtimer") {
            self = .sleep
        } else if waitChannel.contains("poll") || waitChannel.contains("select") || waitChannel.contains("read")
            || waitChannel.contains("wait_woken") || waitChannel.contains("sk_wait")
        {
            self = .io
        } else if waitChannel.contains("do_wait") {
            self = .child
        } else {
            self = .other
        }
    }

    public var phrase: String {
        switch self {
        case .lock: "waiting on a lock (futex)"
        case .sleep: "sleeping"
        case .io: "waiting for I/O (read/poll)"
        case .child: "waiting for a child process"
        case .other: "blocked in the kernel"
        }
    }
}

/// The verdict over a whole stall: CPU-bound or blocked, and blocked on what.
public struct ThreadActivity: Equatable, Sendable {
    public enum Verdict: String, Sendable {
        case cpuBound
        case blocked
        case mixed
    }

    /// Share of wall time the thread spent on a CPU over the measured window, 0–100.
    public var cpuPercent: Double?
    /// Share of the same window it was runnable but waited for a CPU that other threads had (the scheduler's
    /// run-queue wait, `schedstat`), 0–100; nil where not measured. What is left of the window it was blocked.
    public var runnablePercent: Double?
    /// Who had the CPUs while the thread waited for one, where it waited for a tenth of the window or more.
    public var cpuCensus: CPUCensus?
    public var verdict: Verdict
    /// The most common wait among the blocked samples.
    public var blockedOn: WaitReason?

    public init(cpuPercent: Double?, verdict: Verdict, blockedOn: WaitReason?) {
        self.cpuPercent = cpuPercent
        self.verdict = verdict
        self.blockedOn = blockedOn
    }

    /// Judges from the per-sample states and, without them, from the CPU share.
    ///
    /// The states decide when there are any: a thread that is runnable (`R`) in most samples is CPU-bound
    /// even if it got little CPU because other processes competed for it. Over 70 % is CPU-bound, under 30 %
    /// blocked, in between mixed; the same cut-offs apply to the CPU share when it is all there is.
    public init?(cpuPercent: Double?, states: [ThreadState]) {
        let waits = states.compactMap(\.waitReason)
        let commonest = Dictionary(grouping: waits, by: { $0 }).max { $0.value.count < $1.value.count }?.key
        let runningPercent: Double
        if !states.isEmpty {
            runningPercent = Double(states.filter(\.isRunning).count) / Double(states.count) * 100
        } else if let cpuPercent {
            runningPercent = cpuPercent
        } else {
            return nil
        }
        let verdict: Verdict = runningPercent >= 70 ? .cpuBound : runningPercent <= 30 ? .blocked : .mixed
        self.init(cpuPercent: cpuPercent, verdict: verdict, blockedOn: verdict == .cpuBound ? nil : commonest)
    }

    /// "CPU-bound (99% CPU)", "blocked: waiting on a lock (futex) (0% CPU)", "CPU-bound, but got only 48% of a CPU
    /// (other work competed for it; it waited for one 51% of the time)".
    public var summary: String {
        let waited = runnablePercent.map { Int($0.rounded()) }.flatMap { $0 >= 10 ? $0 : nil }
        let cpu =
            cpuPercent.map { " (\(Int($0.rounded()))% CPU\(waited.map { ", waited for a CPU \($0)%" } ?? ""))" } ?? ""
        switch verdict {
        case .cpuBound:
            if let cpuPercent, cpuPercent < 70 {
                let wait = waited.map { "; it waited for one \($0)% of the time" } ?? ""
                return
                    "CPU-bound, but got only \(Int(cpuPercent.rounded()))% of a CPU (other work competed for it\(wait))"
            }
            return "CPU-bound" + cpu
        case .blocked: return "blocked, " + (blockedOn?.phrase ?? "in the kernel") + cpu
        case .mixed: return "partly running, partly " + (blockedOn?.phrase ?? "blocked") + cpu
        }
    }
}

/// Names of the x86-64 system calls, for `/proc/PID/task/TID/syscall`, which gives only the number: the whole
/// table (``table``), so a thread parked by libdispatch reads `rt_sigsuspend`, not a number.
public enum SyscallNames {
    /// The name for a syscall number; `syscall N` for a number the table does not know (a newer kernel's), nil for
    /// a negative one (the thread is not in a system call).
    public static func name(_ number: Int) -> String? {
        guard number >= 0 else { return nil }
        guard number < table.count, !table[number].isEmpty else { return "syscall \(number)" }
        return table[number]
    }
}
