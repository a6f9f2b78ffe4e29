// The terminal's foreground under `run --timeout`: the workload runs in a process group of its own, which takes the
// terminal from stallwatch's and gives it back, as a shell's job would.
import Glibc
import StallwatchCore

/// The controlling terminal, while the workload's process group holds its foreground in stallwatch's place.
///
/// A workload in a process group of its own (so that `--timeout` can stop everything it started) would otherwise be
/// a background job: stopped by its first read of the terminal, deaf to Ctrl-C. Stallwatch's group hands over the
/// foreground only when it holds it and shares it with nothing but its own ancestors (not in a shell pipeline, whose
/// other programs would lose the terminal): a Ctrl-C then reaches the workload's group directly, and a Ctrl-Z that
/// stops the workload stops stallwatch too, so that the shell sees its job stopped. Without the terminal, stallwatch
/// forwards the terminal's signals to the workload's group, which stops if it reads the terminal (as under GNU
/// `timeout` in a pipeline).
final class ForegroundTerminal {
    let descriptor: Int32
    private let ownGroup: pid_t
    private var workloadGroup: pid_t?

    /// The controlling terminal if stallwatch's process group is in its foreground and nothing but stallwatch and
    /// the processes waiting for it are in that group; nil otherwise.
    init?() {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { return nil }
        let group = getpgrp()
        guard tcgetpgrp(descriptor) == group, !Self.othersShare(group) else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        ownGroup = group
    }

    deinit {
        takeBack()
        close(descriptor)
    }

    /// Gives the foreground to the workload's group (which the child already took, where glibc can).
    func give(to group: pid_t) {
        workloadGroup = group
        Self.withTerminalStopsBlocked { _ = tcsetpgrp(descriptor, group) }
    }

    /// Takes the foreground back for stallwatch's group, if the workload's group still holds it.
    func takeBack() {
        guard let workloadGroup, tcgetpgrp(descriptor) == workloadGroup else { return }
        Self.withTerminalStopsBlocked { _ = tcsetpgrp(descriptor, ownGroup) }
    }

    /// The workload was stopped from the terminal (Ctrl-Z, or a read while in the background): stallwatch stops too
    /// with the terminal back in its group's hands; continued in the foreground (`fg`), it gives the terminal back
    /// to the workload; continued in the background (`bg`), it only continues the workload.
    func workloadStopped() {
        guard let workloadGroup else { return }
        takeBack()
        kill(getpid(), SIGSTOP)
        if tcgetpgrp(descriptor) == ownGroup { give(to: workloadGroup) }
        kill(-workloadGroup, SIGCONT)
    }

    /// A job-control stop: what a terminal or a background read sends, not the `SIGSTOP` of a ptrace capture.
    static func isJobControlStop(_ status: Int32) -> Bool {
        guard status & 0xff == 0x7f else { return false }
        let signal = (status >> 8) & 0xff
        return signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU
    }

    /// `tcsetpgrp` from a background group stops the caller with `SIGTTOU` unless it is blocked.
    private static func withTerminalStopsBlocked(_ body: () -> Void) {
        var mask = sigset_t()
        var previous = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTTOU)
        pthread_sigmask(SIG_BLOCK, &mask, &previous)
        body()
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }

    /// Whether a process other than stallwatch and its ancestors (a shell or `make` waiting for it) is in `group`: a
    /// shell pipeline's other programs, which may read the terminal.
    private static func othersShare(_ group: pid_t) -> Bool {
        var waiting: Set<pid_t> = [getpid()]
        var ancestor = getppid()
        while ancestor > 1, waiting.insert(ancestor).inserted {
            guard let fields = ThreadInspector.statFields(pid: ancestor, tid: ancestor), fields.count > 1,
                let parent = Int32(fields[1])
            else { break }
            ancestor = parent
        }
        guard let directory = opendir("/proc") else { return true }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = Int32(name), !waiting.contains(pid),
                let fields = ThreadInspector.statFields(pid: pid, tid: pid), fields.count > 2
            else { continue }
            if Int32(fields[2]) == group { return true }
        }
        return false
    }
}
