// Runs the real stallwatch executable, as a user would, and parses what it prints.
import Foundation
import StallwatchTestSupport
import Testing

/// The built products: the test bundle sits in the same directory as `stallwatch` and `stallwatch-demo`.
enum Products {
    static let directory: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (executable as NSString).deletingLastPathComponent
    }()

    static var stallwatch: String { directory + "/stallwatch" }
    /// The agent library, or the one `STALLWATCH_AGENT_LIBRARY` names (as stallwatch itself takes it).
    static var agent: String {
        ProcessInfo.processInfo.environment["STALLWATCH_AGENT_LIBRARY"].flatMap { $0.isEmpty ? nil : $0 }
            ?? directory + "/libStallwatchAgent.so"
    }
    /// `STALLWATCH_DEMO` names another build of the demo (as it does for `stallwatch demo`): under `Scripts/sanitize`
    /// the watched programs stay uninstrumented (a sanitized demo's stacks and timings are the sanitizer's), only
    /// stallwatch is sanitized.
    static var demo: String {
        ProcessInfo.processInfo.environment["STALLWATCH_DEMO"].flatMap { $0.isEmpty ? nil : $0 }
            ?? directory + "/stallwatch-demo"
    }
}

/// What one stallwatch run printed and returned.
struct RunResult {
    let stdout: String
    let stderr: String
    let status: Int32

    /// Every JSON record on stdout (the JSON-lines report when `--format json` goes to stdout). Throws, naming the
    /// line and the key, if a record does not decode: a key missing or of the wrong type fails the test.
    var records: [JSONRecord] { get throws { try JSONLines.records(in: stdout) } }
    var stalls: [StallRecord] { get throws { try records.compactMap(\.stall) } }
    var summary: SummaryRecord? { get throws { try records.compactMap(\.summary).last } }

    /// The demo's own measurements of its stalls, from its stderr.
    var groundTruth: [DemoStall] { stderr.split(separator: "\n").compactMap { DemoStall(line: String($0)) } }
}

/// One line of the demo's ground truth: `stallwatch-demo: stall scenario=cpu index=1 ... duration_ms=601.2`.
struct DemoStall {
    let scenario: String
    let durationMs: Double
    let startNanoseconds: UInt64
    let culprit: String
    /// The stalled thread, for a stall off the main thread (`thread=NAME tid=N`).
    let threadName: String?
    let tid: Int?

    init?(line: String) {
        guard line.hasPrefix("stallwatch-demo: stall ") else { return nil }
        var fields: [String: String] = [:]
        for part in line.split(separator: " ") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        guard let scenario = fields["scenario"], let duration = fields["duration_ms"].flatMap(Double.init),
            let start = fields["start_ns"].flatMap(UInt64.init), let culprit = fields["culprit"]
        else { return nil }
        self.scenario = scenario
        self.durationMs = duration
        self.startNanoseconds = start
        self.culprit = culprit
        threadName = fields["thread"]
        tid = fields["tid"].flatMap(Int.init)
    }
}

/// Runs `stallwatch ARGUMENTS`, optionally as another user, and waits for it (killing it after `timeout`).
func runStallwatch(
    _ arguments: [String], asUser user: String? = nil, environment: [String: String]? = nil,
    timeout: TimeInterval = 90, throughShell: Bool = false
) throws -> RunResult {
    let process = Process()
    if throughShell {
        // A command sh forks starts with no signal blocked, as from a terminal; Process hands on the calling thread's
        // mask (a test's thread blocks most signals). The status is then the shell's: 128 + N for signal N.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\"$0\" \"$@\"", Products.stallwatch] + arguments
    } else if let user {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments =
            [
                "--reuid=\(user)", "--regid=\(user == "nobody" ? "nogroup" : user)", "--clear-groups",
                "--", Products.stallwatch,
            ] + arguments
    } else {
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = arguments
    }
    if let environment { process.environment = environment }
    let stdoutPipe = Pipe()
    let stderrPipe = Pipe()
    process.standardOutput = stdoutPipe
    process.standardError = stderrPipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes concurrently so neither fills up and blocks the child.
    let stderrBox = DataBox()
    let reader = Thread { stderrBox.data = stderrPipe.fileHandleForReading.readDataToEndOfFile() }
    reader.start()
    let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
    let out = stdoutPipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    killer.cancel()
    while !stderrBox.done { usleep(1000) }
    return RunResult(
        stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: stderrBox.data, as: UTF8.self),
        status: process.terminationStatus)
}

final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Data?
    var data: Data {
        get { lock.withLock { storage ?? Data() } }
        set { lock.withLock { storage = newValue } }
    }
    var done: Bool { lock.withLock { storage != nil } }
}
