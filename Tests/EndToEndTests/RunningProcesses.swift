// Processes an end-to-end test starts and keeps running while it acts on them: a demo to attach to, stallwatch itself
// when a test signals it mid-run, and a C program that spins for ever.
import Foundation
import Testing

/// A program a test built, started directly (not under stallwatch) and killed when the test is done with it.
final class RunningProgram {
    let process = Process()

    /// - Parameters:
    ///   - listening: preload the agent with `STALLWATCH_LISTEN=1`, so `attach` finds it.
    init(_ path: String, _ arguments: [String] = [], listening: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = Self.environment(listening: listening)
        try process.run()
    }

    /// The test's environment without its own preloads; with the agent preloaded and listening if asked.
    static func environment(listening: Bool) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "LD_PRELOAD")
        if listening {
            environment["LD_PRELOAD"] = Products.agent
            environment["STALLWATCH_LISTEN"] = "1"
        }
        return environment
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits until the program has a thread the kernel calls `name` (a loop thread it starts and names itself), at
    /// most `timeout` seconds: a fixed sleep is too short on a loaded machine.
    func waitForThread(named name: String, timeout: TimeInterval = 20) -> Bool {
        waitFor(
            {
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
                return tasks.contains {
                    let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8)
                    return comm?.trimmingCharacters(in: .newlines) == name
                }
            }, timeout: timeout)
    }

    deinit {
        // SIGKILL: a child spawned from a test thread may inherit a mask that blocks SIGTERM.
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A `stallwatch-demo` started directly (not under stallwatch), as a process someone wants to attach to.
final class RunningDemo: @unchecked Sendable {
    let process = Process()
    private let stderr = DataBox()
    private let lines = LineBox()

    /// - Parameters:
    ///   - listening: preload the agent with `STALLWATCH_LISTEN=1`, so `attach` finds it.
    ///   - environment: variables set on top of the test's (`XDG_RUNTIME_DIR`, where a listening agent's socket goes).
    init(_ arguments: [String], listening: Bool = false, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Products.demo)
        process.arguments = arguments
        process.environment = RunningProgram.environment(listening: listening).merging(environment) { $1 }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let lines = self.lines
        let box = stderr
        Thread.detachNewThread {
            var data = Data()
            let handle = pipe.fileHandleForReading
            while case let chunk = handle.availableData, !chunk.isEmpty {
                data.append(chunk)
                lines.set(String(decoding: data, as: UTF8.self))
            }
            box.data = data
        }
        // The banner comes once the scenario is armed; the listening agent is up before main() runs.
        try #require(waitFor({ self.stderrText.contains("pid=") }, timeout: 10), "the demo did not start")
    }

    var pid: Int32 { process.processIdentifier }
    var stderrText: String { lines.get() }
    var groundTruth: [DemoStall] { stderrText.split(separator: "\n").compactMap { DemoStall(line: String($0)) } }

    /// The main thread's state letter, or nil once the process is gone.
    var mainThreadState: Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }

    /// CPU time of the main thread so far, in nanoseconds.
    var mainThreadCPU: UInt64 {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/schedstat", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { UInt64($0) } ?? 0
    }

    func kill(_ signal: Int32 = SIGKILL) {
        if process.isRunning { Glibc.kill(pid, signal) }
    }

    func waitForExit() {
        process.waitUntilExit()
        while !stderr.done { usleep(1000) }
    }

    deinit {
        kill()
        process.waitUntilExit()
    }
}

final class LineBox: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func set(_ value: String) { lock.withLock { text = value } }
    func get() -> String { lock.withLock { text } }
}

/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass.
func waitFor(_ condition: () -> Bool, timeout: TimeInterval) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Starts stallwatch without waiting for it, for tests that signal it mid-run.
final class RunningStallwatch: @unchecked Sendable {
    let process = Process()
    private let out = DataBox()
    private let err = DataBox()
    private let errLines = LineBox()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Products.stallwatch)
        process.arguments = arguments
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let out = self.out
        let err = self.err
        let errLines = self.errLines
        Thread.detachNewThread { out.data = stdoutPipe.fileHandleForReading.readDataToEndOfFile() }
        Thread.detachNewThread {
            var data = Data()
            while case let chunk = stderrPipe.fileHandleForReading.availableData, !chunk.isEmpty {
                data.append(chunk)
                errLines.set(String(decoding: data, as: UTF8.self))
            }
            err.data = data
        }
    }

    /// What stallwatch has said on stderr so far.
    var stderrSoFar: String { errLines.get() }

    /// Waits up to `timeout` seconds for stallwatch to exit; nil if it did not.
    func result(timeout: TimeInterval) -> RunResult? {
        guard waitFor({ !process.isRunning }, timeout: timeout) else {
            process.terminate()
            return nil
        }
        process.waitUntilExit()
        while !out.done || !err.done { usleep(1000) }
        return RunResult(
            stdout: String(decoding: out.data, as: UTF8.self), stderr: String(decoding: err.data, as: UTF8.self),
            status: process.terminationStatus)
    }
}

/// A C program whose main thread spins in `function` for ever.
func spinningProgram(_ function: String) -> String {
    """
    #include <stdio.h>
    __attribute__((noinline)) static unsigned long \(function)(unsigned long state) {
        while (state != 42) { state = state * 6364136223846793005UL + 1442695040888963407UL; }
        return state;
    }
    int main(int argc, char **argv) { printf("%lu\\n", \(function)((unsigned long)argc)); return 0; }
    """
}
