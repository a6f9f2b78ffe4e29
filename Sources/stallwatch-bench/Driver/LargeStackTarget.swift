// Item 4 on a large program: `stallwatch stack` and `eu-stack` on the toolchain's own swift-build, side by side.
import Foundation
import StallwatchCore

/// A live `swift-build` (the toolchain's 260 MB `swift-package`, C++ and Swift, several threads), kept waiting by a
/// package manifest that sleeps while it is evaluated, and the two tools timed on all its threads, taking turns.
///
/// Its DWARF (38 MB of `.debug_info`) is what made `stallwatch stack` slow on large programs: this is where the
/// symbolicator's cost on a big image shows.
struct LargeStackTarget {
    let products: BuildProducts
    static let runs = 5
    /// How long the manifest keeps swift-build waiting: longer than every run together.
    static let holdSeconds = 120

    /// The lines for the stack section, or one saying why not.
    func measure(euStack: String) -> [String] {
        let label = "large program (the toolchain's swift-build, waiting on its manifest)"
        guard let swift = StackTool.onPath("swift") else { return ["\(label): skipped: swift is not on PATH"] }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallwatch-bench-large-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Self.manifest.write(
                to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        } catch {
            return ["\(label): skipped: cannot write its package: \(error)"]
        }
        do {
            let build = try ChildProcess(
                [swift, "build", "--package-path", directory.path],
                environment: ["HOLD_SECONDS": String(Self.holdSeconds)])
            defer {
                kill(-build.pid, SIGKILL)
                build.send(SIGKILL)
                _ = try? build.wait(timeout: 10)
            }
            guard let pid = Self.waitForSwiftBuild(startedBy: build.pid) else {
                return ["\(label): skipped: swift-build did not start waiting on its manifest"]
            }
            let threads = ThreadInspector.threads(pid: pid).count
            let tools: [(name: String, arguments: [String])] = [
                ("stallwatch stack --all-threads PID", [products.stallwatch, "stack", "--all-threads", String(pid)]),
                ("eu-stack -p PID", [euStack, "-p", String(pid)]),
            ]
            var walls = tools.map { _ in [Double]() }
            for _ in 0..<Self.runs {
                for (index, tool) in tools.enumerated() {
                    MonotonicClock.sleep(seconds: 0.1)
                    let start = MonotonicClock.now()
                    let child = try ChildProcess(tool.arguments)
                    let (status, end) = try child.waitForExit(timeout: 60)
                    guard status == 0 else { return ["\(label): \(tool.name) exited with \(status)"] }
                    walls[index].append(Double(end - start))
                }
            }
            let ratio = walls[0].median / max(walls[1].median, 1)
            return [
                "\(label), \(threads) threads, \(Self.runs) runs each, taking turns: "
                    + zip(tools, walls).map { "\($0.name) median \(Format.milliseconds($1.median))" }
                    .joined(separator: ", ") + "; wall ratio stallwatch/eu-stack \(Format.fixed(ratio, 2))"
            ]
        } catch {
            return ["\(label): skipped: \(error)"]
        }
    }

    /// The package whose manifest sleeps `HOLD_SECONDS` while swift-build waits for it.
    static let manifest = """
        // swift-tools-version:6.0
        import Foundation
        import PackageDescription
        sleep(UInt32(ProcessInfo.processInfo.environment["HOLD_SECONDS"] ?? "60") ?? 60)
        let package = Package(name: "held", targets: [])
        """

    /// The swift-build process (the `swift` driver execs it, or starts it as a child) once its manifest runs.
    private static func waitForSwiftBuild(startedBy pid: pid_t) -> pid_t? {
        let deadline = MonotonicClock.now() + 60_000_000_000
        while MonotonicClock.now() < deadline {
            for candidate in [pid] + ThreadInspector.children(of: pid)
            where ThreadInspector.name(pid: candidate, tid: candidate) == "swift-build" {
                // Waiting on the manifest: it has started the manifest's process (compiled and running).
                let compiling: Set<String?> = [
                    "swift-frontend", "swiftc", "swift-driver", "clang", "ld", "ld.gold", nil,
                ]
                if ThreadInspector.children(of: candidate).contains(where: {
                    !compiling.contains(ThreadInspector.name(pid: $0, tid: $0))
                }) {
                    return candidate
                }
            }
            MonotonicClock.sleep(seconds: 0.2)
        }
        return nil
    }
}
