// Everything the bench writes: results on stdout, progress and errors on stderr, each line unbuffered.
import Foundation

/// Unbuffered writes, so a line is never held back when a workload is killed or the driver is piped.
enum BenchOutput {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Progress notes go to stderr, so a few minutes of benchmarking do not look hung and stdout stays the tables.
    static func progress(_ message: String) {
        FileHandle.standardError.write(Data("stallwatch-bench: \(message)\n".utf8))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("stallwatch-bench: error: \(message)\n".utf8))
    }
}
