// Starts the workload with the agent preloaded and its end of the collector socket inherited.
import FoundationEssentials
import Glibc
import StallwatchCore

/// The launched workload process.
struct Workload {
    let pid: pid_t
    let executable: String
}

/// Spawns the workload with `posix_spawn`.
enum WorkloadLauncher {
    /// - Parameters:
    ///   - command: the command line; `command[0]` is kept as the workload's `argv[0]`.
    ///   - executable: the resolved path of `command[0]`.
    ///   - environment: the complete environment for the workload.
    ///   - inheritedSocket: the agent's socket, passed at the same descriptor number.
    ///   - stdoutToStderr: send the workload's stdout to stallwatch's stderr (JSON reports own stdout).
    static func launch(
        command: [String], executable: String, environment: [String: String], inheritedSocket: Int32,
        stdoutToStderr: Bool
    ) throws(RunError) -> Workload {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if stdoutToStderr {
            posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO)
        }
        // dup2 onto itself clears close-on-exec in the child only (glibc ≥ 2.29), so the socket is
        // inherited by the workload and by nothing else stallwatch might start.
        posix_spawn_file_actions_adddup2(&actions, inheritedSocket, inheritedSocket)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in SignalChannel.resetInWorkload { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = command.map { strdup($0) } + [nil]
        let environmentStrings = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            arguments.forEach { free($0) }
            environmentStrings.forEach { free($0) }
        }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, arguments, environmentStrings)
        guard status == 0 else {
            switch status {
            case ENOENT: throw .commandNotFound(command[0])
            case ENOEXEC:
                throw .notExecutable(executable, reason: "not a program this system can run (exec format error)")
            default: throw .notExecutable(executable, reason: String(cString: strerror(status)))
            }
        }
        return Workload(pid: pid, executable: executable)
    }

    /// The workload's environment: the user's, plus the agent preloaded first and its settings.
    static func environment(
        base: [String: String], agentLibrary: String, socket: Int32, options: WatchOptions
    ) -> [String: String] {
        var environment = base
        let preload = [agentLibrary] + (base["LD_PRELOAD"].map { [$0] } ?? [])
        environment["LD_PRELOAD"] = preload.joined(separator: ":")
        environment[AgentEnvironment.socket] = String(socket)
        environment[AgentEnvironment.thresholdNanoseconds] = String(options.thresholdNanoseconds)
        environment[AgentEnvironment.count] = String(options.count)
        environment[AgentEnvironment.maxSamples] = String(options.maxSamples)
        environment[AgentEnvironment.strategy] = options.strategy.rawValue
        environment[AgentEnvironment.collectorPid] = String(getpid())
        // Without --fps, no frame tick, even if stallwatch's own environment had these set.
        for name in [
            AgentEnvironment.fps, AgentEnvironment.fpsMaxFrameNanoseconds, AgentEnvironment.fpsPowFactor,
            AgentEnvironment.fpsDumpNanoseconds,
        ] {
            environment[name] = nil
        }
        environment.merge(options.frameRate?.environment ?? [:]) { _, new in new }
        return environment
    }
}

extension WatchOptions {
    var thresholdNanoseconds: UInt64 { threshold.nanoseconds }

    /// A non-negative duration in whole nanoseconds.
}
