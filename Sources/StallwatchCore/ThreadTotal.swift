// A run's stalls added up per thread, for the summary and JUnit once more than the main thread is watched.

/// The stalls of one thread of one process.
public struct ThreadTotal: Equatable, Sendable {
    public var pid: Int32
    public var tid: Int32
    /// The thread's name; `main` stands for the main thread's loop and queue.
    public var name: String
    public var stallCount: Int
    /// Their lengths added up (unfinished ones as far as they got, as the budgets count them).
    public var stalledNanoseconds: UInt64

    public init(pid: Int32, tid: Int32, name: String, stallCount: Int, stalledNanoseconds: UInt64) {
        self.pid = pid
        self.tid = tid
        self.name = name
        self.stallCount = stallCount
        self.stalledNanoseconds = stalledNanoseconds
    }

    /// Per thread, most stalled time first; empty when every stall is the main thread's (nothing to break down).
    public static func of(_ stalls: [StallReport]) -> [ThreadTotal] {
        guard stalls.contains(where: { !$0.isMainThreadStall }) else { return [] }
        var totals: [String: ThreadTotal] = [:]
        for stall in stalls {
            let tid = stall.isMainThreadStall ? stall.pid : stall.tid
            let key = "\(stall.pid)/\(tid)"
            var total =
                totals[key]
                ?? ThreadTotal(
                    pid: stall.pid, tid: tid, name: stall.isMainThreadStall ? "main" : stall.threadName ?? "?",
                    stallCount: 0, stalledNanoseconds: 0)
            total.stallCount += 1
            total.stalledNanoseconds += stall.length()
            totals[key] = total
        }
        return totals.values.sorted {
            ($0.stalledNanoseconds, $1.pid, $1.tid) > ($1.stalledNanoseconds, $0.pid, $0.tid)
        }
    }
}
