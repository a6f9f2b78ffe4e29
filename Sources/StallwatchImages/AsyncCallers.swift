// Adding a task's async callers to a named native stack: which native frame runs the task, where its async context
// is, and the callers read from it, named like any frame.
import StallwatchCore

/// The async callers of the Swift task a thread is running, spliced into its stack after the native frame that runs
/// the task's current partial function.
///
/// The native frame is found by where the concurrency runtime calls it: a job's partial function is called by the
/// executor (`swift::runJobInEstablishedExecutorContext`, `swift_job_run`), and every async call within the job is a
/// tail call, so the frame just inside the executor's is the one running task code, at `-Onone` and `-O` alike. Its
/// context comes from the capture's hints (``AsyncContextHint``), the chain from ``AsyncChain``.
public enum AsyncCallers {
    /// The stack with its async callers, and why they are missing or cut short, if they are.
    public struct Result: Equatable, Sendable {
        public var frames: [Frame]
        public var error: String?
    }

    /// - Parameters:
    ///   - frames: the native frames as ``Symbolicator`` named them (inlined frames included).
    ///   - hints: one per captured address, in order.
    ///   - memory: the process's memory, read only now, after the thread was released.
    public static func splice(
        into frames: [Frame], hints: [AsyncContextHint], images: ProcessImages, memory: some ProcessMemoryReader,
        symbolicator: Symbolicator
    ) -> Result {
        // The native frames, one per captured address: the last of each address's frames is not inlined.
        let physical = frames.indices.filter { !frames[$0].inlined }
        guard let running = taskFrame(among: physical.map { frames[$0] }) else { return Result(frames: frames) }
        guard running < hints.count else {
            return Result(frames: frames, error: "async callers not read: no async context found in the native frame")
        }
        let walk = bestWalk(from: hints[running], memory: memory) { images.image(containing: $0) != nil }
        return insert(
            AsyncCallersFound(nativeFrame: running, walk: walk), into: frames, images: images,
            symbolicator: symbolicator
        )
    }

    /// The walk from the more fruitful of a frame's candidate contexts: one that leads nowhere was not the context
    /// (r14 may hold anything once the function moved on).
    public static func bestWalk(
        from hint: AsyncContextHint, memory: some ProcessMemoryReader, isCode: (UInt64) -> Bool
    ) -> AsyncChain.Walk {
        let walks = hint.candidates.map { AsyncChain.walk(from: $0, memory: memory, isCode: isCode) }
        let fruitful = walks.max {
            ($0.error == nil ? 1 : 0, $0.resumePoints.count) < ($1.error == nil ? 1 : 0, $1.resumePoints.count)
        }
        return fruitful ?? AsyncChain.Walk(resumePoints: [], error: "no async context found in the native frame")
    }

    /// Callers found for a stack (here, or by the agent in the workload), named and put after their native frame.
    public static func insert(
        _ found: AsyncCallersFound, into frames: [Frame], images: ProcessImages, symbolicator: Symbolicator
    ) -> Result {
        // The native frames, one per captured address: the last of each address's frames is not inlined.
        let physical = frames.indices.filter { !frames[$0].inlined }
        let walk = found.walk
        guard physical.indices.contains(found.nativeFrame) else { return Result(frames: frames) }
        guard !walk.resumePoints.isEmpty || walk.error == nil else {
            return Result(frames: frames, error: "async callers not read: \(walk.error ?? "")")
        }
        let callers = symbolicator.symbolicate(resumePoints: walk.resumePoints, images: images).map { frame in
            var caller = frame
            caller.async = true
            return caller
        }
        var spliced = frames
        spliced.insert(contentsOf: callers, at: physical[found.nativeFrame] + 1)
        return Result(frames: spliced, error: walk.error.map { "async callers cut short: \($0)" })
    }

    /// The index (among native frames) of the frame running a task's partial function, if the stack runs one.
    static func taskFrame(among native: [Frame]) -> Int? {
        if let executor = native.firstIndex(where: isExecutor), executor > 0 { return executor - 1 }
        // An executor this toolchain does not name: the innermost partial function stands in.
        return native.firstIndex { $0.symbol.map(AsyncFunction.isPartialFunction) ?? false }
    }

    /// The concurrency runtime's frames that call a job's partial function.
    static func isExecutor(_ frame: Frame) -> Bool {
        guard let symbol = frame.symbol, frame.imageName?.hasPrefix("libswift_Concurrency") ?? true else {
            return false
        }
        return symbol.hasPrefix("swift::runJobInEstablishedExecutorContext") || symbol == "swift_job_run"
    }
}
