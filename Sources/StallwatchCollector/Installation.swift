// Finds the files stallwatch ships beside its executable: the agent library and the demo workload.
import FoundationEssentials
import Glibc
import StallwatchCore

/// Locates stallwatch's own files relative to the running executable.
public enum Installation {
    /// Overrides the agent library's path (for packaging and tests).
    public static let agentOverride = "STALLWATCH_AGENT_LIBRARY"
    /// Overrides the demo workload's path (for packaging and for sanitized test runs, which watch an uninstrumented
    /// demo).
    public static let demoOverride = "STALLWATCH_DEMO"

    /// The directory holding the `stallwatch` executable.
    static var executableDirectory: String {
        let path =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The agent library to preload, if it exists.
    public static func agentLibrary() -> String? {
        if let override = ProcessInfo.processInfo.environment[agentOverride], !override.isEmpty {
            return FileManager.default.fileExists(atPath: override) ? override : nil
        }
        let path = executableDirectory + "/libStallwatchAgent.so"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// The `stallwatch-demo` executable, if it exists.
    public static func demoExecutable() -> String? {
        let override = ProcessInfo.processInfo.environment[demoOverride].flatMap { $0.isEmpty ? nil : $0 }
        let path = override ?? executableDirectory + "/stallwatch-demo"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
}
