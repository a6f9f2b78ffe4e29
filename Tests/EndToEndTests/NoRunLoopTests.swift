// Programs whose main thread exits into dispatchMain() or an async main: watched by pings, with nothing added to
// their own output, and with the strategy said.
import Foundation
import StallwatchTestSupport
import Testing

/// Compiles a Swift program with the toolchain's `swiftc` into a fresh temporary directory; returns its path.
func compileSwift(_ source: String, name: String, extraArguments: [String] = []) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let sourceFile = directory.appendingPathComponent("\(name).swift")
    try source.write(to: sourceFile, atomically: true, encoding: .utf8)
    let output = directory.appendingPathComponent(name).path
    let compiler = Process()
    compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    compiler.arguments = ["swiftc", "-g", sourceFile.path, "-o", output] + extraArguments
    try compiler.run()
    compiler.waitUntilExit()
    try #require(compiler.terminationStatus == 0, "compiling the test program failed")
    return output
}

/// A stall of `body`'s CPU work after 300 ms, printed in the demo's ground-truth format (`scenario=NAME`).
private func measuredStall(_ name: String, function: String) -> String {
    """
    @inline(never) func \(function)(until deadline: UInt64) -> UInt64 {
        var value: UInt64 = 1
        while now() < deadline { for index in 0..<UInt64(100_000) { value = value &* 31 &+ index } }
        return value
    }
    func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
    func stall() {
        let start = now()
        let value = \(function)(until: start + 600_000_000)
        let milliseconds = Double(now() - start) / 1e6
        FileHandle.standardError.write(Data(
            "stallwatch-demo: stall scenario=\(name) index=1 start_ns=\\(start) duration_ms=\\(milliseconds)"
                .appending(" culprit=\(function) \\(value % 2)\\n").utf8))
    }
    """
}

@Suite(.serialized) struct NoRunLoopTests {
    static let dispatchMainProgram =
        "import Foundation\n" + measuredStall("dispatch-main-now", function: "mergeChangesAtOnce") + """

            // dispatchMain at once: the main thread exits before the agent's watcher has looked at the run loop.
            DispatchQueue.main.asyncAfter(deadline: .now() + 0.3) { stall() }
            DispatchQueue.main.asyncAfter(deadline: .now() + 1.4) { exit(0) }
            dispatchMain()
            """

    static let asyncMainProgram =
        "import Foundation\n" + measuredStall("async-main", function: "indexOnTheMainActor") + """

            @main struct Program {
                static func main() async {
                    try? await Task.sleep(nanoseconds: 300_000_000)
                    await MainActor.run { stall() }
                    try? await Task.sleep(nanoseconds: 400_000_000)
                }
            }
            """

    @Test(arguments: ["dispatchMain", "asyncMain"])
    func watchedByPingsWithNothingAddedToItsOutput(shape: String) throws {
        let program =
            shape == "dispatchMain"
            ? try compileSwift(Self.dispatchMainProgram, name: "dispatch-now")
            : try compileSwift(Self.asyncMainProgram, name: "async-main", extraArguments: ["-parse-as-library"])
        let result = try runStallwatch(["run", "--format", "json", "--", program])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // CoreFoundation complains into the workload's stderr when an observer is added after the main thread
        // exited: the agent must not make it.
        #expect(!result.stderr.contains("Attempting to"), "the workload's stderr: \(result.stderr)")
        #expect(!result.stderr.contains("main thread has exited"))
        let truth = try #require(result.groundTruth.first, "\(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)")
        #expect(try result.stalls.count == 1)
        #expect(stall.activity == "mainQueue")
        #expect(stall.strategy == .value("ping"))
        #expect(stall.culprit?.symbol?.contains(truth.culprit) == true, "culprit \(stall.culprit?.symbol ?? "none")")
        // Pings are posted once a threshold: the start may be late by up to one.
        let duration = try #require(stall.durationMs.value)
        #expect(duration >= truth.durationMs - 90 && duration <= truth.durationMs + 30, "\(duration) vs \(truth)")
        let summary = try #require(try result.summary)
        #expect(summary.strategy == .value("ping"))
    }

    @Test func aRunLoopProgramSaysItWasWatchedByItsObservers() throws {
        let result = try runStallwatch(["demo", "--scenario", "cpu", "--format", "json", "--", "--stalls", "1"])
        #expect(try result.summary?.strategy == .value("runloop"))
        #expect(try result.stalls.first?.strategy == .value("runloop"))
        let text = try runStallwatch(["demo", "--scenario", "cpu", "--", "--stalls", "1"])
        #expect(text.stdout.contains("  watched by run-loop observers"), "\(text.stdout)")
        #expect(text.stdout.contains(") by run-loop observers"), "\(text.stdout)")
    }
}
