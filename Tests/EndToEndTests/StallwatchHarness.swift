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
    /// The variables that name another agent and demo, as stallwatch itself takes them.
    static let agentOverride = "STALLWATCH_AGENT_LIBRARY"
    static let demoOverride = "STALLWATCH_DEMO"
    /// The agent library, or the one `STALLWATCH_AGENT_LIBRARY` names (as stallwatch itself takes it).
    static var agent: String {
        ProcessInfo.processInfo.environment[agentOverride].flatMap { $0.isEmpty ? nil : $0 }
            ?? directory + "/libStallwatchAgent.so"
    }
    /// `STALLWATCH_DEMO` names another build of the demo (as it does for `stallwatch demo`): under `Scripts/sanitize`
    /// the watched programs stay uninstrumented (a sanitized demo's stacks and timings are the sanitizer's), only
    /// stallwatch is sanitized.
    static var demo: String {
        ProcessInfo.processInfo.environment[demoOverride].flatMap { $0.isEmpty ? nil : $0 }
            ?? directory + "/stallwatch-demo"
    }
}

/// Files a test runs as another user (`nobody`), where that user can reach them.
///
/// A clone in `/root` or in a directory of mode 0700 keeps other users out of the build directory: a test that drops
/// privileges then copies what the unprivileged side runs into a directory anyone may enter, removed at exit.
enum Reachable {
    /// Whether every directory above `path` lets other users through.
    static func byOthers(_ path: String) -> Bool {
        var directory = (path as NSString).deletingLastPathComponent
        while !directory.isEmpty {
            var status = stat()
            guard stat(directory, &status) == 0, status.st_mode & 0o001 != 0 else { return false }
            if directory == "/" { return true }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return true
    }

    /// `files` as another user can run them: themselves if they are reachable, else copies (same names) in one new
    /// temporary directory, in the order given.
    static func copies(of files: [String]) throws -> [String] {
        guard !files.allSatisfy(byOthers) else { return files }
        let manager = FileManager.default
        let directory = manager.temporaryDirectory.appendingPathComponent("stallwatch-reachable-\(UUID())").path
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        removeAtExit(directory)
        return try files.map { file in
            let copy = directory + "/" + (file as NSString).lastPathComponent
            try manager.copyItem(atPath: (file as NSString).resolvingSymlinksInPath, toPath: copy)
            return copy
        }
    }

    nonisolated(unsafe) private static var directories: [String] = []
    private static let lock = NSLock()

    private static func removeAtExit(_ directory: String) {
        lock.withLock {
            if directories.isEmpty {
                atexit {
                    for directory in Reachable.directories { try? FileManager.default.removeItem(atPath: directory) }
                }
            }
            directories.append(directory)
        }
    }

    /// stallwatch with its agent and demo beside it (where it looks for them), and the variables that name them when
    /// the test's environment did (under `Scripts/sanitize`).
    static let products: Result<(stallwatch: String, environment: [String: String]), Error> = Result {
        let copies = try Reachable.copies(of: [Products.stallwatch, Products.agent, Products.demo])
        var environment = ProcessInfo.processInfo.environment
        if environment[Products.agentOverride] != nil { environment[Products.agentOverride] = copies[1] }
        if environment[Products.demoOverride] != nil { environment[Products.demoOverride] = copies[2] }
        return (copies[0], environment)
    }
}

extension DemoStall {
    /// The `key=value` words of a ground-truth line, as the demo and the test workloads print them.
    static func fields(of line: some StringProtocol) -> [String: String] {
        var fields: [String: String] = [:]
        for part in line.split(separator: " ") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        return fields
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
        let fields = Self.fields(of: line)
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
        if let environment { process.environment = environment }
    } else if let user {
        let reachable = try Reachable.products.get()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments =
            [
                "--reuid=\(user)", "--regid=\(user == "nobody" ? "nogroup" : user)", "--clear-groups",
                "--", reachable.stallwatch,
            ] + arguments
        process.environment = (environment ?? reachable.environment).merging(
            reachable.environment.filter { [Products.agentOverride, Products.demoOverride].contains($0.key) }
        ) { $1 }
    } else {
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = arguments
        if let environment { process.environment = environment }
    }
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
