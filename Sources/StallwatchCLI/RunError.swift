// The ways `stallwatch run` can fail before or around the workload, each with its exit status.

/// A failure of stallwatch itself (not of the workload): one line for the user and an exit status.
struct RunError: Error {
    let message: String
    let exitCode: Int32

    static func commandNotFound(_ name: String) -> RunError {
        RunError(
            message: "command not found: '\(name)' (not in PATH, and not a path to a file);"
                + " check the spelling or give a path such as ./\(name)",
            exitCode: ExitCode.commandNotFound)
    }

    static func notExecutable(_ path: String, reason: String) -> RunError {
        RunError(message: "cannot execute '\(path)': \(reason)", exitCode: ExitCode.notExecutable)
    }

    static func cannotOpenOutput(_ path: String, reason: String) -> RunError {
        RunError(
            message: "cannot open --output file '\(path)' for appending: \(reason)",
            exitCode: ExitCode.cannotCreateOutput)
    }

    static func internalError(_ what: String) -> RunError {
        RunError(message: what, exitCode: ExitCode.internalError)
    }
}
