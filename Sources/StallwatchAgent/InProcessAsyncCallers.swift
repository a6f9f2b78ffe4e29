// The async callers of a task the agent captured in-process for the collector, read from the workload's own heap:
// the collector may not read it, since it asked for the in-process capture for want of ptrace.
import CStallwatchAgentSupport
import StallwatchCore
import StallwatchImages

/// Finds the native frame running a task without naming frames (the agent never symbolicates for the collector) and
/// walks its async contexts in this process.
enum InProcessAsyncCallers {
    /// The callers of the task the stack runs, or nil if it runs none.
    ///
    /// The executor's exported `swift_job_run` calls the job's partial function, directly or through the runtime's
    /// internal `runJobInEstablishedExecutorContext`, a frame of the same library: the task's frame is the first one
    /// inside those (the rule the collector applies by name, ``AsyncCallers``).
    static func find(addresses: [UInt64], hints: [AsyncContextHint]) -> AsyncCallersFound? {
        var runtimeBase: UInt64 = 0
        guard
            let executor = addresses.indices.first(where: { index in
                // A return address is looked up at its call.
                let (base, symbol) = describe(index == 0 ? addresses[index] : addresses[index] - 1)
                runtimeBase = base
                return symbol == "swift_job_run"
            })
        else { return nil }
        var frame = executor - 1
        while frame > 0, describe(addresses[frame] - 1).base == runtimeBase { frame -= 1 }
        guard frame >= 0, frame < hints.count else { return nil }
        let walk = AsyncCallers.bestWalk(from: hints[frame], memory: ProcessMemory.current) { describe($0).base != 0 }
        return AsyncCallersFound(nativeFrame: frame, walk: walk)
    }

    /// The load base of the object mapping `address` (0 if none) and the exported symbol there.
    private static func describe(_ address: UInt64) -> (base: UInt64, symbol: String?) {
        var base: UInt64 = 0
        var symbol: UnsafePointer<CChar>?
        guard sw_agent_describe_address(address, &base, &symbol) != 0 else { return (0, nil) }
        return (base, symbol.map { String(cString: $0) })
    }
}
