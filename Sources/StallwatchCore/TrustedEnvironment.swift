// What of a process's environment stallwatch's code inside the workload may act on, and what a helper it starts gets.

extension AgentEnvironment {
    /// The prefix of every variable stallwatch's agent, library and helpers read.
    public static let prefix = "STALLWATCH_"

    /// The variables besides stallwatch's own that name a place to run or create something: a caller who is less
    /// privileged than the program must not choose them.
    static let placeNaming = ["PATH", "XDG_RUNTIME_DIR"]

    /// What the agent may act on of `environment`.
    ///
    /// All of it in an ordinary program. A program the kernel started in secure-execution mode (`AT_SECURE`:
    /// set-user-ID, set-group-ID or with file capabilities) may be more privileged than whoever set its environment,
    /// so there the agent honours none of stallwatch's variables (no collector socket, no listener, no helper, no
    /// settings) and neither `PATH` nor `XDG_RUNTIME_DIR`, as glibc's `secure_getenv` does for its own.
    public static func honoured(_ environment: [String: String], secureExecution: Bool) -> [String: String] {
        guard secureExecution else { return environment }
        return environment.filter { !$0.key.hasPrefix(prefix) && !placeNaming.contains($0.key) }
    }

    /// The `PATH` a helper process runs with: the system's directories, never the caller's.
    public static let helperPath = "/usr/local/bin:/usr/bin:/bin"

    /// The whole environment of a helper process the agent starts (library mode's capture helper): nothing of the
    /// caller's that could choose the code it runs (`LD_*`, sanitizer and symbolizer options, stallwatch's own
    /// variables, a `PATH` to search), only the variables the agent sets itself and the locale.
    ///
    /// - Parameters:
    ///   - environment: the app's environment.
    ///   - settings: the variables the agent sets for the helper (their names must start with ``prefix``).
    public static func forHelper(_ environment: [String: String], settings: [String: String] = [:]) -> [String: String]
    {
        var kept = environment.filter { $0.key == "LANG" || $0.key.hasPrefix("LC_") }
        kept["PATH"] = helperPath
        for (name, value) in settings where name.hasPrefix(prefix) { kept[name] = value }
        return kept
    }
}
