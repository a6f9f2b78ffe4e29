// Async callers in the stacks stallwatch captures: each compared with the chain the program knows it called, at
// -Onone and -O, under every way Swift concurrency drives the main actor on Linux.
import Foundation
import StallwatchTestSupport
import Testing

/// The names a stack shows for a task, innermost first: the native frame running it, then its async callers, each
/// an async function's own name (a partial function counts as its function).
func logicalChain(_ frames: [FrameRecord]) -> [String]? {
    guard let first = frames.firstIndex(where: \.async), first > 0 else { return nil }
    return frames[(first - 1)...].prefix { $0.async || $0 == frames[first - 1] }.compactMap(\.symbol).map(logicalName)
}

/// `f()` for `(2) suspend resume partial function for f()`: the function a partial function belongs to.
func logicalName(_ symbol: String) -> String {
    guard symbol.hasPrefix("("), let range = symbol.range(of: " partial function for ") else { return symbol }
    return String(symbol[range.upperBound...])
}

@Suite(.serialized) struct AsyncCallerTests {
    /// The thread whose stack shows async frames, and that chain.
    func chain(ofProcess pid: Int32) throws -> (thread: StackThreadRecord, chain: [String]) {
        let result = try runStallwatch(["stack", "--all-threads", "--format", "json", String(pid)])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stack = try #require(try result.records.first?.stack)
        let thread = try #require(stack.threads.first { logicalChain($0.frames) != nil }, "no async frames: \(stack)")
        return (thread, logicalChain(thread.frames) ?? [])
    }

    @Test(arguments: AsyncProgram.Shape.allCases, [false, true])
    func mainActorChainsOfEveryDepth(shape: AsyncProgram.Shape, optimized: Bool) throws {
        let path = try AsyncProgram.build(AsyncProgram.source(shape), name: "chain-\(shape)", optimized: optimized)
        for depth in 1...AsyncProgram.deepest {
            let program = try RunningAsyncProgram(path, [String(depth), "stack"])
            let (thread, chain) = try chain(ofProcess: program.pid)
            let levels = chain.filter { $0.hasPrefix("level") }
            #expect(levels == AsyncProgram.expectedChain(depth: depth), "depth \(depth): \(chain)")
            #expect(thread.error == nil, "\(thread.error ?? "")")
            // Outward to the task's entry: the runtime's completion of the task is the last caller.
            #expect(chain.last?.hasPrefix("completeTask") == true, "depth \(depth): \(chain)")
            // Each async frame is named at its resume point, in the program's source.
            let callers = thread.frames.filter { $0.async && logicalName($0.symbol ?? "").hasPrefix("level") }
            #expect(callers.count == depth - 1)
            #expect(callers.allSatisfy { $0.file?.hasSuffix("chain-\(shape).swift") == true && $0.line != nil })
        }
    }

    @Test(arguments: ["generic", "task", "detached"], [false, true])
    func genericFunctionsClosuresAndTasks(variant: String, optimized: Bool) throws {
        let path = try AsyncProgram.build(AsyncProgram.variants, name: "variants", optimized: optimized)
        let program = try RunningAsyncProgram(path, [variant, "stack"])
        let (thread, chain) = try chain(ofProcess: program.pid)
        let named = chain.filter { name in AsyncProgram.variantChain.contains { name.contains($0) } }
        // The optimizer may merge a closure into its caller's context, never reorder or invent callers.
        let expected = AsyncProgram.variantChain.filter { wanted in named.contains { $0.contains(wanted) } }
        #expect(named.count == expected.count, "\(chain)")
        #expect(zip(named, expected).allSatisfy { $0.contains($1) }, "\(chain)")
        for function in ["innermost()", "genericMiddle", "outermost()"] {
            #expect(named.contains { $0.contains(function) }, "\(function) missing from \(chain)")
        }
        if !optimized { #expect(named.count == AsyncProgram.variantChain.count, "\(chain)") }
        #expect(thread.error == nil)
        // Task {} off the main actor and Task.detached run on the cooperative pool, not on the main queue.
        if variant != "generic" { #expect(thread.name.contains("cooperative") || !thread.main, "\(thread.name)") }
    }

    @Test(arguments: [false, true])
    func aParkedTaskHasNoAsyncFramesARunningOneHas(optimized: Bool) throws {
        let path = try AsyncProgram.build(AsyncProgram.parkedAndRunning, name: "parked", optimized: optimized)
        let program = try RunningAsyncProgram(path, ["1", "stack"])
        let result = try runStallwatch(["stack", "--all-threads", "--format", "json", String(program.pid)])
        let stack = try #require(try result.records.first?.stack)
        // The main thread waits in its run loop; the main actor's task is suspended in Task.sleep, on no thread.
        let main = try #require(stack.threads.first { $0.main })
        let mainHasAsyncFrames = main.frames.contains { $0.async }
        #expect(!mainHasAsyncFrames, "\(main.frames.compactMap(\.symbol))")
        #expect(main.error == nil)
        let parkedShown = stack.threads.contains { thread in
            thread.frames.contains { $0.symbol?.contains("parkedOnTheMainActor") == true }
        }
        #expect(!parkedShown)
        let running = stack.threads.compactMap { logicalChain($0.frames) }
        #expect(running.count == 1)
        #expect(running.first?.prefix(2) == ["spinning()", "runningDetached()"], "\(running)")
    }

    @Test(arguments: AsyncProgram.Shape.allCases, [false, true])
    func aStallShowsItsAsyncCallers(shape: AsyncProgram.Shape, optimized: Bool) throws {
        let path = try AsyncProgram.build(AsyncProgram.source(shape), name: "chain-\(shape)", optimized: optimized)
        let result = try runStallwatch(["run", "--format", "json", "--", path, "3", "stall"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)\n\(result.stderr)")
        #expect(stall.culprit?.symbol == "blockHere()", "\(stall.culprit?.symbol ?? "none")")
        let sample = try #require(stall.samples.first { $0.frames.contains(where: \.async) }, "no async frames")
        let chain = logicalChain(sample.frames) ?? []
        #expect(chain.filter { $0.hasPrefix("level") } == AsyncProgram.expectedChain(depth: 3), "\(chain)")
    }

    /// ptrace refused: the agent captures on the main thread with a signal and reads the callers from its own heap,
    /// which the collector may not read.
    @Test(arguments: [false, true])
    func inProcessCaptureFindsTheCallersToo(optimized: Bool) throws {
        let path = try AsyncProgram.build(AsyncProgram.source(.runLoop), name: "chain-runLoop", optimized: optimized)
        let result = try runStallwatch(
            ["run", "--format", "json", "--", path, "4", "stall", "nodump"], asUser: "nobody")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)\n\(result.stderr)")
        #expect(stall.capture.method == "signal", "\(stall.capture)")
        #expect(stall.capture.note?.contains("async callers") != true, "\(stall.capture.note ?? "")")
        let sample = try #require(stall.samples.first { $0.frames.contains(where: \.async) }, "no async frames")
        let chain = logicalChain(sample.frames) ?? []
        #expect(chain.filter { $0.hasPrefix("level") } == AsyncProgram.expectedChain(depth: 4), "\(chain)")
    }
}
