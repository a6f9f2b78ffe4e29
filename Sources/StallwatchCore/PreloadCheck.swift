// Whether a process of the workload still has the agent in its LD_PRELOAD, read from its environment.

/// Reads a process's initial environment (`/proc/PID/environ`: NUL-separated `NAME=value`, as its program was
/// started) for the one question `run` has when a process loaded the agent once and then watched nothing: did it
/// start its program (`env LD_PRELOAD=x.so D`, `env -i D`, an `execve` with an environment of its own) without the
/// agent?
public enum PreloadCheck {
    /// What the program was started with instead of the agent: the LD_PRELOAD value, or nil if the agent is in it.
    public enum Verdict: Equatable, Sendable {
        /// The agent is among the preloaded libraries.
        case agentPreloaded
        /// LD_PRELOAD was set without the agent.
        case replaced(String)
        /// LD_PRELOAD was not set at all (a cleared environment).
        case unset
    }

    /// The verdict on `environ`'s LD_PRELOAD for `agentLibrary` (a path); nil for an empty environment (a zombie's,
    /// or one that could not be read), which says nothing.
    public static func verdict(environ: some Collection<UInt8>, agentLibrary: String) -> Verdict? {
        guard !environ.isEmpty else { return nil }
        let prefix = Array("LD_PRELOAD=".utf8)
        guard let entry = environ.split(separator: 0).last(where: { $0.starts(with: prefix) }) else { return .unset }
        let value = String(decoding: entry.dropFirst(prefix.count), as: UTF8.self)
        // ld.so splits LD_PRELOAD on spaces and colons.
        let libraries = value.split(whereSeparator: { $0 == ":" || $0 == " " }).map(String.init)
        let agentName = agentLibrary.split(separator: "/").last.map(String.init) ?? agentLibrary
        if libraries.contains(where: { $0 == agentLibrary || $0.hasSuffix("/" + agentName) || $0 == agentName }) {
            return .agentPreloaded
        }
        return .replaced(value)
    }
}
