// The collector's `--metrics` side: what it found, into the recorder the endpoint reads.
import Glibc
import StallwatchCore
import StallwatchMetrics

extension Collector {
    /// A thread counted by `stallwatch_watched_threads`.
    struct WatchedThread: Hashable {
        let pid: Int32
        let tid: Int32
    }

    /// Starts recording into `recorder`; the main thread's series shows from the start when it is watched.
    func record(into recorder: MetricsRecorder) {
        metrics = recorder
        if settings.threads.contains(.main) || settings.threads.contains(.all) {
            recorder.update { $0.showThread(StallMetrics.mainThread) }
        }
    }

    func metricsStallDetected(_ report: StallReport) {
        metrics?.update {
            $0.stallDetected(
                StallMetrics.StallKey(pid: report.pid, identifier: report.identifier),
                thread: report.metricsThreadName, start: report.start)
        }
    }

    func metricsStallFinished(_ report: StallReport, captureNanoseconds: UInt64?) {
        metrics?.update {
            $0.stallFinished(
                StallMetrics.StallKey(pid: report.pid, identifier: report.identifier),
                thread: report.metricsThreadName, duration: report.duration, captureNanoseconds: captureNanoseconds)
        }
    }

    /// A thread whose loop is now watched (by an agent, the kernel trace or `/proc`).
    func watchedThread(pid: Int32, tid: Int32) {
        metricsThreads.insert(WatchedThread(pid: pid, tid: tid))
        let count = metricsThreads.count
        metrics?.update { $0.watchedThreads = count }
    }

    /// About once a second: drops the watched threads that are gone (nothing says when an agent's loop thread or a
    /// process exits), for `stallwatch_watched_threads`.
    func checkWatchedThreads(now: UInt64) {
        guard now >= metricsThreadsCheckedAt + 1_000_000_000 else { return }
        metricsThreadsCheckedAt = now
        let alive = metricsThreads.filter { access("/proc/\($0.pid)/task/\($0.tid)", F_OK) == 0 }
        guard alive.count != metricsThreads.count else { return }
        metricsThreads = alive
        metrics?.update { $0.watchedThreads = alive.count }
    }
}
