// `run`: notices a process of the workload that started its program without the agent, while it still runs.
import FoundationEssentials
import StallwatchCore

/// Looks, on the collector's wakes, at the workload processes that loaded the agent but watch nothing: a wrapper
/// (`env`, `sh`, `setpriv`) that then started the real program with an LD_PRELOAD of its own, or with none, left the
/// agent out of it, and only the program's environment, read while it runs, can tell.
final class PreloadWitness {
    /// At most this many processes are looked at: a workload that forks thousands of short helpers is not read
    /// thousands of times.
    static let processLimit = 64
    /// How often the environments are read at most.
    static let interval: UInt64 = 200_000_000

    private let agentLibrary: String
    private var lastCheck: UInt64 = 0
    /// Processes already found without the agent, with what they were started as.
    private(set) var findings: [(pid: Int32, program: String, verdict: PreloadCheck.Verdict)] = []

    init(agentLibrary: String) {
        self.agentLibrary = agentLibrary
    }

    /// Reads the environment of each of `pids` (those that loaded the agent and watch nothing) not yet found.
    func check(_ pids: some Sequence<Int32>, now: UInt64) {
        guard now >= lastCheck + Self.interval else { return }
        lastCheck = now
        for pid in pids.prefix(Self.processLimit) where !findings.contains(where: { $0.pid == pid }) {
            guard case .bytes(let environ) = FileBytes.read("/proc/\(pid)/environ", limit: 4 << 20) else { continue }
            // An empty environment is a cleared one (`env -i`) in a live process, and nothing in a zombie.
            let alive = ThreadInspector.state(pid: pid, tid: pid).map { $0.state != "Z" } ?? false
            let verdict =
                environ.isEmpty
                ? (alive ? .unset : nil)
                : PreloadCheck.verdict(
                    environ: environ, agentLibrary: agentLibrary)
            guard let verdict, verdict != .agentPreloaded else { continue }
            findings.append((pid, ThreadInspector.processName(pid: pid), verdict))
        }
    }

    /// The warning for the summary, when a finding explains why nothing was watched.
    var warning: String? {
        guard let finding = findings.first else { return nil }
        let unwatched = "pid \(finding.pid) (\(finding.program)) was started"
        switch finding.verdict {
        case .replaced(let value):
            return unwatched + " with LD_PRELOAD=\(value), which leaves stallwatch's agent out, so it was not watched;"
                + " set LD_PRELOAD before stallwatch instead (LD_PRELOAD=... stallwatch run -- CMD: stallwatch keeps"
                + " it and adds its agent)"
        case .unset, .agentPreloaded:
            return unwatched + " with a cleared environment (env -i?), without stallwatch's agent, so it was not"
                + " watched; a wrapper must pass on LD_PRELOAD and the STALLWATCH_* variables"
        }
    }
}
