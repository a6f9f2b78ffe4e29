// The kernel's account of a thread's time: on a CPU, waiting for one, and (the rest) not runnable at all.
import Foundation

/// `/proc/PID/task/TID/schedstat`: nanoseconds on a CPU and waiting on a run queue, since the thread began.
///
/// A thread that always wants to run (the gap target's spin) is not runnable only while something stops it,
/// so over a window, wall time minus these two is how long it was stopped, whatever else the machine runs.
struct SchedulerStatistics {
    let onCPU: UInt64
    let waiting: UInt64
    let readAt: UInt64

    /// Reads the thread's counters now; nil when the file is missing (a kernel without schedstats).
    init?(pid: pid_t, tid: pid_t) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/schedstat", encoding: .utf8)
        else { return nil }
        let fields = text.split(separator: " ").compactMap {
            UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard fields.count >= 2 else { return nil }
        readAt = MonotonicClock.now()
        onCPU = fields[0]
        waiting = fields[1]
    }

    /// Nanoseconds between `earlier` and this reading that the thread was neither running nor waiting to run.
    func notRunnable(since earlier: SchedulerStatistics) -> Double {
        let wall = Double(readAt - earlier.readAt)
        let busy = Double(onCPU - earlier.onCPU) + Double(waiting - earlier.waiting)
        return max(0, wall - busy)
    }
}
