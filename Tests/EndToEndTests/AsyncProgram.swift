// The Swift programs the async-caller tests capture: chains of async functions of a known depth, driven the ways
// Swift concurrency runs on Linux, each blocking in a known function and saying so on stdout.
import Foundation
import Testing

/// A program whose task awaits a chain `level1` → … → `levelN` and blocks in `blockHere()` at the end of it.
///
/// Run as `PROGRAM DEPTH stack` it blocks until killed, after printing `ready`; as `PROGRAM DEPTH stall` it blocks
/// 700 ms, once, and exits half a second later; a further `nodump` makes it refuse ptrace. Odd levels await `Task.yield()` first, so the chain holds both shapes
/// of async frame: a function still in its entry and one resumed in a partial function.
struct AsyncProgram {
    /// How the program runs its main-actor work.
    enum Shape: String, CaseIterable, CustomStringConvertible {
        /// `@main` with `static func main() async`.
        case asyncMain
        /// Top-level code: `Task { @MainActor in … }`, then `RunLoop.main.run()` (a Foundation app).
        case runLoop
        /// Top-level code: `Task { @MainActor in … }`, then `dispatchMain()`.
        case dispatchMain

        var description: String { rawValue }
    }

    static let deepest = 5

    /// The chain's functions, innermost first, as a stack must show them for `depth`.
    static func expectedChain(depth: Int) -> [String] {
        (1...depth).reversed().map { "level\($0)(_:)" }
    }

    static let prelude = """
        import Foundation

        nonisolated(unsafe) var mode = CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : "stack"

        @inline(never) func blockHere() {
            if mode == "stall" {
                // Until a deadline, as a stall would: an in-process capture's signal cuts each sleep short.
                let end = Date().addingTimeInterval(0.7)
                while Date() < end { usleep(10_000) }
                return
            }
            print("ready")
            fflush(stdout)
            while true { usleep(10_000) }
        }

        /// Before a stall, a moment for the watcher: a program with no run loop is watched by main-queue pings, which
        /// find the thread serving the main queue by the first answer.
        func settle() async {
            if CommandLine.arguments.contains("nodump") { forbidPtrace() }
            if mode == "stall" { try? await Task.sleep(nanoseconds: 400_000_000) }
        }

        /// prctl(PR_SET_DUMPABLE, 0): ptrace and process_vm_readv are refused to anyone but root, so the collector
        /// falls back to in-process capture. (prctl is variadic, which Swift does not import.)
        func forbidPtrace() {
            typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
            let prctl = unsafeBitCast(dlsym(nil, "prctl"), to: Prctl.self)
            _ = prctl(4, 0, 0, 0, 0)
        }

        """

    /// `level1` … `level5`, main-actor isolated or not.
    static func levels(isolation: String) -> String {
        (1...deepest).map { level in
            let next = level == deepest ? "blockHere()" : "await level\(level + 1)(depth)"
            let yield = level % 2 == 1 ? "await Task.yield(); " : ""
            return """
                \(isolation) @inline(never) func level\(level)(_ depth: Int) async {
                    \(yield)if depth == \(level) { blockHere() } else { \(next) }
                }
                """
        }.joined(separator: "\n") + "\n"
    }

    static func source(_ shape: Shape) -> String {
        let depth = "Int(CommandLine.arguments[1]) ?? 1"
        switch shape {
        case .asyncMain:
            return prelude + levels(isolation: "@MainActor") + """
                @main struct Program {
                    static func main() async {
                        await settle()
                        await level1(\(depth))
                        try? await Task.sleep(nanoseconds: 500_000_000)
                    }
                }
                """
        case .runLoop, .dispatchMain:
            let run = shape == .runLoop ? "RunLoop.main.run()" : "dispatchMain()"
            return prelude + levels(isolation: "@MainActor") + """
                Task { @MainActor in
                    await settle()
                    await level1(\(depth))
                    try? await Task.sleep(nanoseconds: 500_000_000)
                    exit(0)
                }
                \(run)
                """
        }
    }

    /// A generic async function and an async closure in the chain, and tasks started with `Task {}` (off the main
    /// actor) and `Task.detached`, chosen by the first argument: `generic`, `task`, `detached`.
    static let variants =
        prelude + """
            @inline(never) func innermost() async { await Task.yield(); blockHere() }
            @inline(never) func genericMiddle<Value: Sendable>(_ value: Value) async -> Value {
                await innermost()
                return value
            }
            @inline(never) func closureCaller(_ body: @Sendable () async -> Void) async { await body() }
            @inline(never) func outermost() async {
                await closureCaller { _ = await genericMiddle(42) }
            }
            @inline(never) func startTask() { Task { await outermost() } }
            @inline(never) func startDetached() { Task.detached { await outermost() } }

            switch CommandLine.arguments[1] {
            case "task": startTask()
            case "detached": startDetached()
            default: Task { @MainActor in await outermost() }
            }
            dispatchMain()
            """

    /// What the variants' chain must show, innermost first.
    static let variantChain = [
        "innermost()", "genericMiddle<A>(_:)", "closure #1 in outermost()", "closureCaller(_:)", "outermost()",
    ]

    /// One program parked in an async sleep on the main actor while a detached task spins in a chain of its own.
    static let parkedAndRunning =
        prelude + """
            @MainActor @inline(never) func parkedOnTheMainActor() async {
                try? await Task.sleep(nanoseconds: 60_000_000_000)
            }
            @inline(never) func spinning() async { await Task.yield(); blockHere() }
            @inline(never) func runningDetached() async { await spinning() }

            Task { @MainActor in await parkedOnTheMainActor() }
            Task.detached { await runningDetached() }
            RunLoop.main.run()
            """

    /// Compiled programs by source and optimization, built once per test run.
    nonisolated(unsafe) private static var built: [String: String] = [:]
    private static let lock = NSLock()

    static func build(_ source: String, name: String, optimized: Bool) throws -> String {
        let key = "\(optimized) \(source)"
        if let path = lock.withLock({ built[key] }) { return path }
        let path = try compileSwift(
            source, name: name,
            extraArguments: (optimized ? ["-O"] : ["-Onone"]) + (source.contains("@main") ? ["-parse-as-library"] : []))
        lock.withLock { built[key] = path }
        return path
    }
}

/// A started async program, killed when done with.
final class RunningAsyncProgram {
    let process = Process()
    private let output = Pipe()

    /// Starts `path ARGUMENTS` and waits for its `ready`.
    init(_ path: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = output.fileHandleForReading.readLine(timeout: 10)
        try #require(line == "ready", "the program did not get to its blocking function (read \(line ?? "nothing"))")
    }

    var pid: Int32 { process.processIdentifier }

    deinit {
        // SIGKILL: the test process may have SIGTERM blocked, and its children inherit the mask.
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }
}

extension FileHandle {
    /// One line of output, or nil after `timeout` seconds or at its end.
    func readLine(timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var bytes: [UInt8] = []
        var pollDescriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        while Date() < deadline {
            guard poll(&pollDescriptor, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard Glibc.read(fileDescriptor, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }
}
