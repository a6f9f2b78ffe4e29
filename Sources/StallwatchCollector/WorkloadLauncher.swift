// Starts the workload with the agent preloaded and its end of the collector socket inherited.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchSystem

/// The launched workload process.
struct Workload {
    let pid: pid_t
    let executable: String
    /// Whether the workload leads a process group of its own (under `--timeout`): signals go to the whole group.
    let ownProcessGroup: Bool
}

/// Spawns the workload with `posix_spawn`.
enum WorkloadLauncher {
    /// - Parameters:
    ///   - command: the command line; `command[0]` is kept as the workload's `argv[0]`.
    ///   - executable: the resolved path of `command[0]`.
    ///   - environment: the complete environment for the workload.
    ///   - inheritedSocket: the agent's socket, passed at the same descriptor number.
    ///   - stdoutToStderr: send the workload's stdout to stallwatch's stderr (JSON reports own stdout).
    ///   - ownProcessGroup: start the workload as the leader of a process group of its own, which takes `terminal`'s
    ///     foreground if there is one.
    static func launch(
        command: [String], executable: String, environment: [String: String], inheritedSocket: Int32,
        stdoutToStderr: Bool, ownProcessGroup: Bool, terminal: ForegroundTerminal?
    ) throws(StallwatchError) -> Workload {
        var spawn = Spawn(
            executable: executable, arguments: command, environment: Spawn.environmentStrings(environment))
        if stdoutToStderr { spawn.fileActions.append(.duplicate(STDERR_FILENO, to: STDOUT_FILENO)) }
        // dup2 onto itself clears close-on-exec in the child only, so the socket is inherited by the workload and by
        // nothing else stallwatch might start.
        spawn.fileActions.append(.duplicate(inheritedSocket, to: inheritedSocket))
        spawn.signalsAtDefault = SignalChannel.resetInWorkload
        spawn.newProcessGroup = ownProcessGroup
        spawn.foregroundTerminal = ownProcessGroup ? terminal?.descriptor : nil
        let pid: pid_t
        do {
            pid = try spawn.start()
        } catch {
            switch error.errno {
            case ENOENT: throw .commandNotFound(command[0])
            case ENOEXEC:
                throw .notExecutable(executable, reason: "not a program this system can run (exec format error)")
            default: throw .notExecutable(executable, reason: error.reason)
            }
        }
        // Where glibc cannot make the child take the terminal before it runs, the parent gives it as soon as it can.
        if ownProcessGroup { terminal?.give(to: pid) }
        return Workload(pid: pid, executable: executable, ownProcessGroup: ownProcessGroup)
    }

    /// The workload's environment: the user's, plus the agent preloaded first and its settings.
    static func environment(
        base: [String: String], agentLibrary: String, socket: Int32, settings: WatchSettings
    ) -> [String: String] {
        var environment = base
        let preload = [agentLibrary] + (base["LD_PRELOAD"].map { [$0] } ?? [])
        environment["LD_PRELOAD"] = preload.joined(separator: ":")
        environment[AgentEnvironment.socket] = String(socket)
        environment[AgentEnvironment.collectorPid] = String(getpid())
        for (name, value) in settings.environment { environment[name] = value }
        return environment
    }
}
