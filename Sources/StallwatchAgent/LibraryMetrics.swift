// Library mode's `STALLWATCH_METRICS=[HOST]:PORT`: the app's stalls served as Prometheus metrics from its own process.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchMetrics

/// The metrics of a ``StallMonitor`` and the endpoint serving them, fed by its ``HandlerSink`` on the watcher thread.
///
/// Never a reason for the app to stop: a bad value or a port that cannot be had is one line on the app's stderr, and
/// the monitor watches on without metrics. Read only from the environment ``AgentEnvironment/current`` honours, so a
/// set-user-ID app's caller cannot open a port in its name.
final class LibraryMetrics {
    private let recorder: MetricsRecorder
    private let endpoint: MetricsEndpoint
    private let pid = getpid()
    /// The threads whose loops the monitor watches, checked against `/proc` about once a second.
    private var watched: Set<Int32> = []
    private var checkedAt: UInt64 = 0

    private init(recorder: MetricsRecorder, endpoint: MetricsEndpoint) {
        self.recorder = recorder
        self.endpoint = endpoint
    }

    /// Starts serving on the address `value` names; nil without a value, or with one line on stderr when it cannot.
    static func start(_ value: String?) -> LibraryMetrics? {
        guard let value else { return nil }
        let address: MetricsAddress
        switch MetricsAddress.parse(value) {
        case .failure(let error):
            say("warning: \(AgentEnvironment.metrics)='\(value)' is not used: \(error.reason)")
            return nil
        case .success(let parsed): address = parsed
        }
        let recorder = MetricsRecorder()
        do {
            let endpoint = try MetricsEndpoint.start(address) {
                PrometheusExposition.render(recorder.snapshot(), now: sw_agent_now_ns())
            }
            // The app's user asked for it, and with port 0 this is where to find it.
            say("serving metrics on \(endpoint.address.url)")
            return LibraryMetrics(recorder: recorder, endpoint: endpoint)
        } catch {
            say("warning: \(AgentEnvironment.metrics) is not used: \(error.message)")
            return nil
        }
    }

    private static func say(_ text: String) {
        FileHandle.standardError.write(Data("stallwatch agent: \(text)\n".utf8))
    }

    /// The monitor watches `tid`'s loop (the main thread's: its series shows at 0 from now on, when it counts).
    func watching(tid: Int32, showsMain: Bool) {
        watched.insert(tid)
        let count = watched.count
        recorder.update {
            if tid == pid, showsMain { $0.showThread(StallMetrics.mainThread) }
            $0.watchedThreads = count
        }
    }

    /// About once a second: forgets the watched threads that exited.
    func check(now: UInt64) {
        guard now >= checkedAt + 1_000_000_000 else { return }
        checkedAt = now
        let alive = watched.filter { access("/proc/self/task/\($0)", F_OK) == 0 }
        guard alive.count != watched.count else { return }
        watched = alive
        recorder.update { $0.watchedThreads = alive.count }
    }

    func stallDetected(_ report: StallReport) {
        recorder.update {
            $0.stallDetected(key(report), thread: report.metricsThreadName, start: report.start)
        }
    }

    func stallFinished(_ report: StallReport, captureNanoseconds: UInt64?) {
        recorder.update {
            $0.stallFinished(
                key(report), thread: report.metricsThreadName, duration: report.duration,
                captureNanoseconds: captureNanoseconds)
        }
    }

    func busyPeriods(_ histogram: LatencyHistogram) {
        recorder.update { $0.busyPeriods(histogram, of: pid) }
    }

    /// The monitor stopped: the endpoint closes.
    func stop() { endpoint.stop() }

    /// In a child of `fork()`: the child's copies of the sockets are closed, the parent's endpoint serves on.
    func abandonAfterFork() { endpoint.abandonAfterFork() }

    private func key(_ report: StallReport) -> StallMetrics.StallKey {
        StallMetrics.StallKey(pid: report.pid, identifier: report.identifier)
    }
}
