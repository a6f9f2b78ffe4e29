// Running a program to its end and taking what it printed, for tests that compare outputs or read a tool's listing.
import Foundation

/// The standard output of `path ARGUMENTS`, run directly (not under stallwatch) to its end; its stderr is the test's.
public func standardOutput(of path: String, _ arguments: [String] = []) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
