// An interpreter watched from outside: two script-level stalls in the same C functions of the interpreter, whose
// native stacks differ only beyond the three frames nearest the work, must not share a fingerprint.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct InterpreterTests {
    static let script = """
        import select
        def work(_):
            total = 0
            for i in range(12_000_000):
                total += i * i
            return total
        def once():
            list(map(work, [0]))
        def twice():
            list(map(lambda _: once(), [0]))
        def idle():
            select.select([], [], [], 0.6)
        idle(); once(); idle(); twice(); idle()
        """

    static var python: String? {
        ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/python3" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test(.enabled(if: python != nil, "needs python3"))
    func scriptStallsReachedByDifferentPathsHaveDifferentFingerprints() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallwatch-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("paths.py")
        try Self.script.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.python))
        process.arguments = [file.path]
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        usleep(150_000)
        let result = try runStallwatch([
            "attach", "--mode", "external", "--format", "json", String(process.processIdentifier),
        ])
        // The interpreter's start-up may be caught too: the script's two stalls are the last two.
        let stalls = Array(try result.stalls.suffix(2))
        #expect(stalls.count == 2, "\(result.stdout)\n\(result.stderr)")
        guard stalls.count == 2 else { return }
        #expect(
            stalls[0].fingerprint != stalls[1].fingerprint,
            "the same interpreter frames near the work, different paths further out: \(stalls.map(\.symbols))")
    }
}
