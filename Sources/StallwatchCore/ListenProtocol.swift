// Listen mode: how `stallwatch attach` finds an agent already running in a process and starts a session with it.

extension AgentEnvironment {
    /// Set to `1` in a process that loads the agent (preloaded, or linked) to make the agent listen for
    /// `stallwatch attach` on a Unix socket only the same user or root can use (see ``ListenSocket``).
    public static let listen = "STALLWATCH_LISTEN"
}

/// The first datagram `stallwatch attach` sends on a listening agent's socket: the session's settings.
///
/// The agent answers with ``AgentMessage/loaded(pid:agentVersion:)`` and then speaks the same protocol as under
/// `stallwatch run`, or with ``AgentMessage/refused(pid:reason:)`` and closes the connection.
public struct AttachRequest: Codable, Equatable, Sendable {
    /// `--threshold` in nanoseconds.
    public var thresholdNanoseconds: UInt64
    /// `--count`.
    public var count: Int
    /// `--max-samples`.
    public var maxSamples: Int
    /// The collector's ``StallwatchVersion``: the agent refuses a collector of another version, whose messages it
    /// may not understand.
    public var collectorVersion: String
    /// `--thread`, as ``Swift/Array/encoded``: the loop and executor threads the agent watches besides the main loop.
    /// Absent means `main`.
    public var threads: String?

    public init(
        thresholdNanoseconds: UInt64, count: Int, maxSamples: Int, collectorVersion: String, threads: String? = nil
    ) {
        self.thresholdNanoseconds = thresholdNanoseconds
        self.count = count
        self.maxSamples = maxSamples
        self.collectorVersion = collectorVersion
        self.threads = threads
    }
}

/// Where a listening agent's socket lives.
///
/// `$XDG_RUNTIME_DIR/stallwatch/PID.sock` when the process has `XDG_RUNTIME_DIR`, else
/// `/tmp/stallwatch-UID/PID.sock`; the directory is the user's own with mode 0700 and the socket has mode 0600,
/// and the agent also checks each collector's credentials (`SO_PEERCRED`: the same user, or root).
public enum ListenSocket {
    /// The directory holding the sockets of one user's processes.
    ///
    /// - Parameters:
    ///   - runtimeDirectory: the process's `XDG_RUNTIME_DIR`, if set and absolute.
    ///   - uid: the process's effective user id.
    public static func directory(runtimeDirectory: String?, uid: UInt32) -> String {
        if let runtimeDirectory, runtimeDirectory.hasPrefix("/") {
            let trimmed = runtimeDirectory.hasSuffix("/") ? String(runtimeDirectory.dropLast()) : runtimeDirectory
            return trimmed + "/stallwatch"
        }
        return "/tmp/stallwatch-\(uid)"
    }

    /// The socket's file name in ``directory(runtimeDirectory:uid:)``: the pid as the process itself sees it
    /// (in its own pid namespace).
    public static func fileName(pid: Int32) -> String {
        "\(pid).sock"
    }
}
