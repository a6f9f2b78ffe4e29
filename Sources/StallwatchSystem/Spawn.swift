// Starting a program with posix_spawn: what the workload, a helper and the bench's children have in common.
import Glibc

/// A program to start with `posix_spawn`, with its descriptors and signals set up as the parent asks.
///
/// Not Foundation's `Process`: it starts threads, polls a run loop to wait, and gives no control over which
/// descriptors a child inherits at which number. Every child starts with no signal blocked, whatever the parent
/// blocks for its signalfd, and with `signalsAtDefault` at their default actions.
public struct Spawn {
    /// What the child's descriptor table gets, in order, on top of what it inherits (close-on-exec ones are not).
    public enum FileAction {
        /// `dup2(from, to)`; `from == to` clears close-on-exec for the child only (glibc 2.29 and later).
        case duplicate(Int32, to: Int32)
        /// Opens `path` with `flags` at descriptor `to`.
        case open(String, flags: Int32, to: Int32)
    }

    public var executable: String
    /// The child's `argv`, `argv[0]` included.
    public var arguments: [String]
    /// `NAME=value` strings.
    public var environment: [String]
    public var fileActions: [FileAction] = []
    public var signalsAtDefault: [Int32] = []
    /// Starts the child as the leader of a process group of its own (`setpgid(0, 0)` before it runs).
    public var newProcessGroup = false
    /// A terminal whose foreground the child's process group takes before the program runs (with
    /// ``newProcessGroup``), so that it may read the terminal and get its signals from its first instruction.
    public var foregroundTerminal: Int32?

    public init(executable: String, arguments: [String], environment: [String]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// `NAME=value` strings from a dictionary, for ``environment``.
    public static func environmentStrings(_ environment: [String: String]) -> [String] {
        environment.map { "\($0.key)=\($0.value)" }
    }

    /// Starts the child and returns its pid.
    ///
    /// - Throws: the `posix_spawn` error: `ENOENT` for a missing program, `ENOEXEC` for one the kernel cannot run,
    ///   `EACCES` for one without execute permission.
    public func start() throws(SystemError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for action in fileActions {
            switch action {
            case .duplicate(let from, let to): posix_spawn_file_actions_adddup2(&actions, from, to)
            case .open(let path, let flags, let to): posix_spawn_file_actions_addopen(&actions, to, path, flags, 0)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in signalsAtDefault { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attributes, 0)
            if let foregroundTerminal, let takeForeground = Self.addTakeForeground {
                takeForeground(&actions, foregroundTerminal)
            }
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        try Syscall.checking("posix_spawn") { posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addtcsetpgrp_np` (2.35 and later), which Swift's Glibc module does not
    /// declare; nil with an older glibc, where the parent's `tcsetpgrp` after the spawn is all there is.
    private static let addTakeForeground:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let symbol = dlsym(nil, "posix_spawn_file_actions_addtcsetpgrp_np") else { return nil }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()
}
