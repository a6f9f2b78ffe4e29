// The exit statuses of the `stallwatch` executable: one table for every command and the engine behind them.

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
    /// Reports were lost: a write to `--output` or the `--junit` file failed during or after the watch, or a reader
    /// too slow to keep up made stallwatch drop records (`EX_IOERR`).
    public static let reportsLost: Int32 = 74
    /// The workload was built with a different Swift runtime than the agent, or (`attach --mode agent`) no agent
    /// answers in the process (`EX_UNAVAILABLE`).
    public static let runtimeMismatch: Int32 = 69
    /// The workload exited 0 but its stalls broke a budget (`--fail-on-stall`, `--max-stall`, ...).
    public static let budgetBroken: Int32 = 80
    /// `--timeout` expired and stallwatch stopped the workload (as GNU `timeout` reports it).
    public static let timedOut: Int32 = 124
    /// `report`: an input holds no stallwatch records at all (`EX_DATAERR`); the others are still reported.
    public static let noRecords: Int32 = 65
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
