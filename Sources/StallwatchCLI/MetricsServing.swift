// `--metrics`: the endpoint started before the watch (so that a port in use stops the command before anything runs)
// and stopped after it.
import StallwatchCore
import StallwatchMetrics

/// The metrics of one `run`, `demo` or `attach`, and the endpoint serving them.
struct MetricsServing {
    let recorder: MetricsRecorder
    let endpoint: MetricsEndpoint

    /// Listens on `address` and says where on stderr; nil without `--metrics`. A port that cannot be had is
    /// ``ExitCode/cannotCreateOutput`` (`EX_CANTCREAT`), like an `--output` file that cannot be.
    static func start(_ address: MetricsAddress?) throws(StallwatchError) -> MetricsServing? {
        guard let address else { return nil }
        let recorder = MetricsRecorder()
        do {
            let endpoint = try MetricsEndpoint.start(address) {
                PrometheusExposition.render(recorder.snapshot(), now: monotonicNow())
            }
            Diagnostics.note("serving metrics on \(endpoint.address.url)")
            return MetricsServing(recorder: recorder, endpoint: endpoint)
        } catch {
            throw StallwatchError(message: error.message, exitCode: ExitCode.cannotCreateOutput)
        }
    }
}
