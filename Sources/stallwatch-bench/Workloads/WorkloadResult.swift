// The one line a throughput workload prints, and its parsing on the driver's side.
import Glibc

/// How much a workload got done, in how much wall time and how much of its main thread's CPU time.
struct WorkloadResult {
    /// Iterations (tight loops) or completed callbacks and blocks (realistic).
    let count: UInt64
    /// Measured inside the workload around its run loop, so process start-up and the agent's set-up are not
    /// part of the throughput.
    let elapsedNanoseconds: UInt64
    /// The main thread's CPU time over the same span (`CLOCK_THREAD_CPUTIME_ID`): the time it actually ran,
    /// whatever else the shared machine was doing.
    let cpuNanoseconds: UInt64

    var perSecond: Double { Double(count) / (Double(elapsedNanoseconds) / 1e9) }

    /// Work per second of main-thread CPU: what the loop gets done per second it runs. Everything a watcher
    /// makes the main thread do (observer call-outs, clock reads, syscalls such as a semaphore's futex wake)
    /// is main-thread CPU time; time the thread spent preempted by other processes is not.
    var perCPUSecond: Double { Double(count) / (Double(cpuNanoseconds) / 1e9) }

    /// `stallwatch-bench: count=N elapsed_ns=N cpu_ns=N`, prefixed so it stands out in stallwatch's output.
    var line: String { "\(Self.prefix)count=\(count) elapsed_ns=\(elapsedNanoseconds) cpu_ns=\(cpuNanoseconds)" }

    private static let prefix = "stallwatch-bench: "

    init(count: UInt64, elapsedNanoseconds: UInt64, cpuNanoseconds: UInt64) {
        self.count = count
        self.elapsedNanoseconds = elapsedNanoseconds
        self.cpuNanoseconds = cpuNanoseconds
    }

    /// Finds the result line in a workload's output.
    init?(output: String) {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix(Self.prefix + "count=") }) else {
            return nil
        }
        var fields: [Substring: UInt64] = [:]
        for field in line.dropFirst(Self.prefix.count).split(separator: " ") {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = UInt64(parts[1]) { fields[parts[0]] = value }
        }
        guard let count = fields["count"], let elapsed = fields["elapsed_ns"], let cpu = fields["cpu_ns"],
            elapsed > 0, cpu > 0
        else { return nil }
        self.init(count: count, elapsedNanoseconds: elapsed, cpuNanoseconds: cpu)
    }

    /// Times `body` on the calling (main) thread and pairs its count with the wall and CPU time it took.
    static func measure(_ body: () -> UInt64) -> WorkloadResult {
        let start = MonotonicClock.now()
        let cpuStart = threadCPUTime()
        let count = body()
        return WorkloadResult(
            count: count, elapsedNanoseconds: MonotonicClock.now() - start, cpuNanoseconds: threadCPUTime() - cpuStart)
    }

    private static func threadCPUTime() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
