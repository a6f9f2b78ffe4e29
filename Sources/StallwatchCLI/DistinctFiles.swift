// Paths the user named for different jobs must name different files: one check for every command that takes two.
import StallwatchCore
import StallwatchSystem

/// Refuses two paths that name one file (the same device and inode, however spelled or linked).
enum DistinctFiles {
    /// A usage error when `first` and `second` are one file: writing one would destroy the other (`run --output X
    /// --junit X`, `report --output X X`).
    ///
    /// - Parameters:
    ///   - firstRole: how the message names the first path (`'--output'`).
    ///   - secondRole: how it names the second (`'--junit'`, `the input`).
    static func check(_ first: String, _ firstRole: String, _ second: String, _ secondRole: String)
        throws(StallwatchError)
    {
        // `-` is stdin or stdout, never a file by that name.
        guard first != WatchOptions.standardOutputPath, second != WatchOptions.standardOutputPath,
            OutputFile.sameFile(first, second)
        else { return }
        throw StallwatchError(
            message: "\(firstRole) and \(secondRole) name the same file ('\(second)'); give each a file of its own",
            exitCode: ExitCode.usage)
    }
}
