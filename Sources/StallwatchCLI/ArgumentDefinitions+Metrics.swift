// `--metrics`, for `run`, `demo` and `attach`: its own file, so that the option tables stay easy to merge.
import StallwatchMetrics

extension ArgumentDefinitions {
    static let metrics = ArgumentDefinition(
        key: .metrics,
        names: ["--metrics"],
        valueName: "address",
        abstract: "Serve Prometheus metrics on http://<address>/metrics while watching: [HOST]:PORT, HOST a numeric"
            + " address (default: \(MetricsAddress.defaultHost)), port 0 for any free one (said on stderr). See"
            + " docs/metrics.md."
    )
}
