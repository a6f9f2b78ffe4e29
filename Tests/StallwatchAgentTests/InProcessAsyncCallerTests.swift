// In-process capture of a thread running a Swift task: the handler keeps each frame's async-context hints, and the
// task's async callers are read from this process's heap afterwards, as library mode does.
import CStallwatchAgentSupport
import Glibc
import StallwatchCore
import StallwatchImages
import Synchronization
import Testing

/// What the task and the test share: the thread the task blocks on, and when to let it go.
private final class TaskGate: Sendable {
    let tid = Atomic<Int32>(0)
    let released = Atomic<Bool>(false)
}

/// The chain the task runs, outermost first: `awaitingOuter` → `awaitingMiddle` → `blockingInTask`.
private enum AsyncFixture {
    @inline(never) static func awaitingOuter(_ gate: TaskGate) async {
        await Task.yield()
        await awaitingMiddle(gate)
    }

    @inline(never) static func awaitingMiddle(_ gate: TaskGate) async {
        await Task.yield()
        blockingInTask(gate)
    }

    /// Blocks the cooperative thread, which blocks every signal like all libdispatch workers: the capture signal is
    /// let through while it waits.
    @inline(never) static func blockingInTask(_ gate: TaskGate) {
        var set = sigset_t()
        var saved = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, sw_agent_default_capture_signal())
        pthread_sigmask(SIG_UNBLOCK, &set, &saved)
        gate.tid.store(sw_agent_gettid(), ordering: .releasing)
        while !gate.released.load(ordering: .acquiring) { usleep(1000) }
        pthread_sigmask(SIG_SETMASK, &saved, nil)
    }
}

@Suite("In-process async callers", .serialized)
struct InProcessAsyncCallerTests {
    @Test("a task's async callers are found from the hints the signal handler kept")
    func callersOfABlockedTask() async throws {
        try #require(sw_agent_capture_prepare(sw_agent_default_capture_signal()) == 0)
        let gate = TaskGate()
        let task = Task.detached { await AsyncFixture.awaitingOuter(gate) }
        defer { gate.released.store(true, ordering: .releasing) }
        // Long: in parallel test runs on two cores the cooperative pool's two threads may both be held by tests that
        // wait for compilers (20 s and more) before the task gets one.
        for _ in 0..<120_000 where gate.tid.load(ordering: .acquiring) == 0 { usleep(1000) }
        let tid = gate.tid.load(ordering: .acquiring)
        try #require(tid != 0, "the task never ran")

        var addresses = [UInt64](repeating: 0, count: 128)
        var hints = [UInt64](repeating: 0, count: 256)
        let count = sw_agent_capture_thread(tid, &addresses, &hints, 128, 1000, nil)
        try #require(count > 0, "\(String(cString: sw_agent_capture_error()))")
        // The task still blocks, as a stalled one does, so its contexts are live while they are read.
        let images = ProcessImages.captureCurrentProcess()
        let symbolicator = Symbolicator()
        let named = AsyncCallers.splice(
            into: symbolicator.symbolicate(Array(addresses.prefix(Int(count))), images: images),
            hints: (0..<Int(count)).map { AsyncContextHint(frameRecord: hints[2 * $0], register: hints[2 * $0 + 1]) },
            images: images, memory: ProcessMemory.current, symbolicator: symbolicator)
        gate.released.store(true, ordering: .releasing)
        await task.value

        #expect(named.error == nil, "\(named.error ?? "")")
        let frames = named.frames
        let symbols = frames.map { $0.symbol ?? "?" }
        let blocking = index(of: "blockingInTask", in: frames)
        let native = index(of: "awaitingMiddle", in: frames)
        let outer = index(of: "awaitingOuter", in: frames)
        try #require(blocking != nil && native != nil && outer != nil, "\(symbols)")
        #expect(blocking! < native! && native! < outer!, "\(symbols)")
        #expect(!frames[native!].async)
        #expect(frames[outer!].async)
    }
}

/// The index of the first frame whose name contains `name`.
private func index(of name: String, in frames: [Frame]) -> Int? {
    frames.firstIndex { frame in frame.symbol?.contains(name) ?? false }
}
