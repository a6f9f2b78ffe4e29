// The ways stallwatch itself can fail (not the workload): one sentence for the user and the exit status it means.

/// A failure of stallwatch itself: one line for the user, saying what is wrong and what to do, and an exit status.
///
/// Every command's failures travel as this type to the one place that prints them.
public struct StallwatchError: Error, Equatable, Sendable {
    public let message: String
    public let exitCode: Int32

    public init(message: String, exitCode: Int32) {
        self.message = message
        self.exitCode = exitCode
    }

    public static func commandNotFound(_ name: String) -> StallwatchError {
        // A name with a slash is a path already, never looked up in PATH.
        let message =
            name.contains("/")
            ? "command not found: '\(name)' (no such file); check the path"
            : "command not found: '\(name)' (not in PATH, and not a path to a file);"
                + " check the spelling or give a path such as ./\(name)"
        return StallwatchError(message: message, exitCode: ExitCode.commandNotFound)
    }

    public static func notExecutable(_ path: String, reason: String) -> StallwatchError {
        StallwatchError(message: "cannot execute '\(path)': \(reason)", exitCode: ExitCode.notExecutable)
    }

    public static func cannotOpenOutput(_ path: String, reason: String) -> StallwatchError {
        StallwatchError(
            message: "cannot open --output file '\(path)' for appending: \(reason)",
            exitCode: ExitCode.cannotCreateOutput)
    }

    public static func internalError(_ what: String) -> StallwatchError {
        StallwatchError(message: what, exitCode: ExitCode.internalError)
    }
}
