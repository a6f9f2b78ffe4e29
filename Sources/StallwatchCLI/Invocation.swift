// What the command line asked stallwatch to do, and the exit statuses the entry point returns.

/// One parsed command line: the single value the entry point dispatches on.
///
/// Produced by ``ArgumentParser/parse(_:)``; a usage error is a ``UsageError`` instead.
public enum Invocation: Equatable, Sendable {
    /// Print help for a topic on stdout and exit with ``ExitCode/success``.
    ///
    /// Comes from `-h`, `--help`, `help [SUBCOMMAND]`, or no arguments at all.
    case help(HelpTopic)
    /// Print the version on stdout and exit with ``ExitCode/success``.
    ///
    /// The version itself is `StallwatchCore.StallwatchVersion.string`, shared with the agent.
    case version
    /// `stallwatch run`: launch a command and report its stalls.
    case run(RunOptions)
    /// `stallwatch demo`: launch the demo workload and report its stalls.
    case demo(DemoOptions)
    /// `stallwatch attach`: watch a running process and report its stalls.
    case attach(AttachOptions)
    /// `stallwatch stack`: print a running process's stacks once.
    case stack(StackOptions)
}

/// The help page to show, and the usage line a ``UsageError`` points at.
public enum HelpTopic: String, CaseIterable, Sendable {
    /// The top-level `stallwatch` command.
    case root
    /// `stallwatch run`.
    case run
    /// `stallwatch demo`.
    case demo
    /// `stallwatch attach`.
    case attach
    /// `stallwatch stack`.
    case stack
}

/// Exit statuses of the `stallwatch` executable.
///
/// The `EX_*` values follow BSD `sysexits.h`; 126 and 127 mean what they mean to a shell, so
/// scripts that wrap `stallwatch run` see the same codes as if they had run the command directly.
public enum ExitCode {
    /// Help, version, or a finished run whose workload exited 0.
    public static let success: Int32 = 0
    /// The command line is wrong (`EX_USAGE`).
    public static let usage: Int32 = 64
    /// stallwatch itself failed (`EX_SOFTWARE`).
    public static let internalError: Int32 = 70
    /// The `--output` file cannot be created or written (`EX_CANTCREAT`).
    public static let cannotCreateOutput: Int32 = 73
    /// The workload was built with a different Swift runtime than the agent, or (`attach --mode agent`) no agent
    /// answers in the process (`EX_UNAVAILABLE`).
    public static let runtimeMismatch: Int32 = 69
    /// The workload exited 0 but its stalls broke a budget (`--fail-on-stall`, `--max-stall`, ...).
    public static let budgetBroken: Int32 = 80
    /// `--timeout` expired and stallwatch stopped the workload (as GNU `timeout` reports it).
    public static let timedOut: Int32 = 124
    /// `attach`, `stack`: no such process, or it exited before anything could be captured (`EX_NOINPUT`).
    public static let noSuchProcess: Int32 = 66
    /// `attach`, `stack`: not permitted to trace the process; the message says what to change (`EX_NOPERM`).
    public static let permissionDenied: Int32 = 77
    /// The command exists but cannot be executed.
    public static let notExecutable: Int32 = 126
    /// The command was not found.
    public static let commandNotFound: Int32 = 127

    /// The status that reports a workload killed by `signal`: 128 + N, as a shell reports it.
    public static func killedBySignal(_ signal: Int32) -> Int32 {
        128 + signal
    }
}
