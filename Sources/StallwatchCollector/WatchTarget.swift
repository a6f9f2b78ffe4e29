// What a collector watches, `stallwatch run`'s child or `stallwatch attach`'s process: how the watch ends, and what
// stallwatch may do to the process meanwhile.
import Glibc
import StallwatchCore

/// The process side of a ``Collector``'s poll loop.
protocol WatchTarget: AnyObject {
    /// Whether the watch is over.
    var isFinished: Bool { get }
    /// When the loop must wake at the latest, `CLOCK_MONOTONIC` nanoseconds.
    func nextWake(now: UInt64) -> UInt64
    /// Signals sent to stallwatch.
    func received(_ signals: [SignalChannel.Received])
    /// The agent's socket hung up.
    func agentHungUp()
    /// After each wake: deadlines and exits; returns what an external watcher saw.
    func step(now: UInt64) -> [AgentMessage]
    /// How an attached process's stall was seen; nil under `run`.
    func attachedStall(identifier: Int) -> AttachedStall?
    /// Whether stallwatch may act on the word of an agent in process `pid` (sample it, report it).
    func mayWatch(_ pid: Int32) -> Bool
    /// The attached process, whose threads are watched from the start; nil under `run` (its processes announce
    /// themselves).
    var attachedPid: Int32? { get }
    /// The process the watch is about from its start: `run`'s workload, the attached process.
    var firstPid: Int32 { get }
    /// Whether a watched thread of process `pid` found gone at the watch's end exited on its own, ending its stall
    /// (its process lives on, or exited by itself), rather than being killed with its process mid-stall.
    func threadsExitedOnTheirOwn(pid: Int32) -> Bool
}

/// A workload `run` launched: the watch ends when it exits and it is reaped; signals sent to stallwatch alone are
/// forwarded to it; `--timeout` stops it.
final class LaunchedWorkload: WatchTarget {
    let workload: Workload
    /// How long a workload gets to exit after SIGTERM before SIGKILL.
    static let terminationGrace: UInt64 = 5_000_000_000

    /// `--timeout`'s deadline and, once it passed, when SIGKILL follows SIGTERM (`CLOCK_MONOTONIC` ns).
    private var timeoutDeadline: UInt64?
    private var killDeadline: UInt64?
    /// Whether `--timeout` expired and the workload was told to stop.
    private(set) var timedOut = false
    /// The workload's raw wait status once it exited.
    private(set) var waitStatus: Int32?
    /// When it was reaped, `CLOCK_MONOTONIC` ns.
    private(set) var exitedAt: UInt64?

    /// The terminal whose foreground the workload's process group holds, if it took it from stallwatch's.
    private let terminal: ForegroundTerminal?

    init(_ workload: Workload, timeout: UInt64?, terminal: ForegroundTerminal?, now: UInt64) {
        self.workload = workload
        self.terminal = terminal
        timeoutDeadline = timeout.map { now + $0 }
    }

    /// Whom stallwatch signals: the workload's process group when it has one of its own, else the workload alone.
    private var signalled: pid_t { workload.ownProcessGroup ? -workload.pid : workload.pid }

    var isFinished: Bool { waitStatus != nil }

    func nextWake(now: UInt64) -> UInt64 {
        // The timeout and its grace period are the only deadlines of a run; SIGCHLD normally wakes the loop when the
        // workload exits, and the second is a safety net.
        [timedOut ? nil : timeoutDeadline, killDeadline, now + 1_000_000_000].compactMap { $0 }.min() ?? now
    }

    func received(_ signals: [SignalChannel.Received]) {
        for received in signals where received.signal != SIGCHLD {
            // A terminal's Ctrl-C already reached a workload in stallwatch's process group; forward only what another
            // process sent to stallwatch alone, so the workload sees each signal once. A workload in a group of its
            // own that holds the terminal gets the terminal's signals itself, and stallwatch none of them.
            if received.fromProcess || workload.ownProcessGroup { kill(signalled, received.signal) }
        }
    }

    func agentHungUp() {}

    func step(now: UInt64) -> [AgentMessage] {
        enforceTimeout(now: now)
        reap()
        return []
    }

    func attachedStall(identifier: Int) -> AttachedStall? { nil }

    var attachedPid: Int32? { nil }
    var firstPid: Int32 { workload.pid }

    /// The workload exited with a status of its own (not killed by a signal, nor stopped by `--timeout`); another
    /// process of the run still runs.
    func threadsExitedOnTheirOwn(pid: Int32) -> Bool {
        guard pid == workload.pid else { return processLives(pid) }
        guard let waitStatus, !timedOut else { return false }
        return waitStatus & 0x7f == 0
    }

    /// The workload and the processes it started: only they inherit the agent's socket.
    func mayWatch(_ pid: Int32) -> Bool {
        pid == workload.pid || Preflight.isDescendant(pid)
    }

    /// Past the deadline, SIGTERM the workload's process group (and SIGCONT it, in case it was stopped, as GNU
    /// `timeout` does); past the grace period, SIGKILL it.
    private func enforceTimeout(now: UInt64) {
        guard waitStatus == nil, let deadline = timeoutDeadline else { return }
        if !timedOut, now >= deadline {
            timedOut = true
            kill(signalled, SIGTERM)
            kill(signalled, SIGCONT)
            killDeadline = now + Self.terminationGrace
        } else if let killAt = killDeadline, now >= killAt {
            kill(signalled, SIGKILL)
            killDeadline = nil
        }
    }

    /// Collects the workload's exit, and every other child that exited: as the pid namespace's init (a container's
    /// entrypoint), stallwatch inherits every orphan in it, and nobody else would reap them. The collector's own
    /// helpers are reaped by their own pid before it returns to its loop, so none of them is ever waited for here.
    private func reap() {
        guard waitStatus == nil else { return }
        while true {
            var status: Int32 = 0
            let result = waitpid(-1, &status, WNOHANG | (terminal == nil ? 0 : WUNTRACED))
            if result < 0, errno == EINTR { continue }
            if result < 0, errno == ECHILD { waitStatus = waitStatus ?? 0 }
            guard result > 0 else { break }
            // A late ptrace stop (after a capture timed out) is reported here too: not an exit.
            let stopped = status & 0xff == 0x7f
            guard result == workload.pid else { continue }
            if stopped, ForegroundTerminal.isJobControlStop(status) { terminal?.workloadStopped() }
            if !stopped { waitStatus = status }
        }
        if waitStatus != nil {
            exitedAt = monotonicNow()
            terminal?.takeBack()
        }
    }
}

/// A process `attach` watches: never reaped, never signalled; the watch ends at its exit, at a signal to
/// stallwatch, at the deadline, or when its agent hangs up.
final class AttachedProcess: WatchTarget {
    let process: TargetProcess
    /// When `--duration` runs out, `CLOCK_MONOTONIC` nanoseconds.
    let deadline: UInt64?
    /// Whether the process is watched from outside (its threads' states in `/proc`), not through its agent.
    let external: Bool
    /// The sampling interval external mode reports as its resolution.
    private let threshold: UInt64
    /// Why the session ended; nil while it goes on.
    private(set) var ending: AttachEnding?

    init(process: TargetProcess, deadline: UInt64?, external: Bool, threshold: UInt64) {
        self.process = process
        self.deadline = deadline
        self.external = external
        self.threshold = threshold
    }

    var mode: WatchMode { external ? .external : .agent }
    var isFinished: Bool { ending != nil }

    func nextWake(now: UInt64) -> UInt64 {
        // Short enough to notice the process's exit promptly: nothing else announces it to a non-parent.
        [now + 100_000_000, deadline].compactMap { $0 }.min() ?? now
    }

    func received(_ signals: [SignalChannel.Received]) {
        for received in signals where received.signal != SIGCHLD { ending = .signal(received.signal) }
    }

    func agentHungUp() {
        ending = process.isAlive() ? .agentDisconnected : .exited
    }

    func step(now: UInt64) -> [AgentMessage] {
        guard ending == nil else { return [] }
        if !process.isAlive() {
            ending = .exited
        } else if let deadline, now >= deadline {
            ending = .duration
        }
        return []
    }

    /// The attached process alone: the socket is a connection to its agent.
    func mayWatch(_ pid: Int32) -> Bool {
        pid == process.pid
    }

    var attachedPid: Int32? { process.pid }
    var firstPid: Int32 { process.pid }

    /// The process still runs: a thread of it that is gone exited. Once the process is gone, how it went is not
    /// known to a process that is not its parent.
    func threadsExitedOnTheirOwn(pid: Int32) -> Bool { processLives(pid) }

    func attachedStall(identifier: Int) -> AttachedStall? {
        // A thread is judged only once seen at rest in its loop (``EventLoopEvidence``), so no stall reported from
        // outside was already under way at the first look.
        AttachedStall(mode: mode, resolutionNanoseconds: external ? threshold : nil)
    }
}

/// Whether process `pid` runs still (neither gone nor a zombie).
private func processLives(_ pid: Int32) -> Bool {
    guard let state = ThreadInspector.statFields(pid: pid, tid: pid)?.first else { return false }
    return state != "Z" && state != "X"
}
