// Resolves the workload's command the way a shell would, so errors name the real problem.
import FoundationEssentials
import Glibc
import StallwatchCore

/// Finds the executable for a command name: a path as given, or the first match in `PATH`.
enum CommandResolver {
    /// - Returns: the path to execute.
    /// - Throws: ``StallwatchError`` "not found" (127) or "not executable" (126), like a shell.
    static func resolve(_ name: String, path: String?) throws(StallwatchError) -> String {
        if name.contains("/") {
            return try check(name, as: name)
        }
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(
            separator: ":", omittingEmptySubsequences: false)
        var firstUnexecutable: String?
        for directory in directories {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            var status = stat()
            guard stat(candidate, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            if access(candidate, X_OK) == 0 { return candidate }
            firstUnexecutable = firstUnexecutable ?? candidate
        }
        if let candidate = firstUnexecutable {
            throw .notExecutable(candidate, reason: "permission denied (the file is not executable)")
        }
        throw .commandNotFound(name)
    }

    private static func check(_ path: String, as name: String) throws(StallwatchError) -> String {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == EACCES { throw .notExecutable(path, reason: "permission denied") }
            throw .commandNotFound(name)
        }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            throw .notExecutable(path, reason: "it is a directory")
        }
        guard access(path, X_OK) == 0 else {
            throw .notExecutable(path, reason: "permission denied (the file is not executable; try chmod +x)")
        }
        return path
    }
}
