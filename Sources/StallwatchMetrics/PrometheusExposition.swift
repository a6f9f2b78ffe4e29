// The Prometheus text exposition format (0.0.4) of a metrics value: a pure function, tested without a socket.

/// Renders ``StallMetrics`` as Prometheus text.
///
/// Names follow Prometheus's conventions: a `stallwatch_` prefix, base units (seconds) in the name, `_total` on the
/// counter. Every family has its `# HELP` and `# TYPE`; series are sorted by label value so that two scrapes of the
/// same numbers are the same text.
public enum PrometheusExposition {
    /// The `Content-Type` of the text format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exposition of `metrics` at `now` (`CLOCK_MONOTONIC` ns, for the stalls in progress).
    public static func render(_ metrics: StallMetrics, now: UInt64) -> String {
        var text = ""
        family(
            &text, "stallwatch_stalls_total", type: "counter",
            help: "Stalls detected, counted at detection, by thread name (at most \(StallMetrics.threadLabelLimit)"
                + " names; the rest as \"\(StallMetrics.otherThreads)\").")
        for (thread, count) in metrics.stalls.sorted(by: { $0.key < $1.key }) {
            text += "stallwatch_stalls_total{thread=\"\(escapedLabelValue(thread))\"} \(count)\n"
        }
        family(
            &text, "stallwatch_stalled_seconds", type: "gauge",
            help: "How long each thread has been stalled now; 0 when it is not stalled.")
        for (thread, stalled) in metrics.stalledNanoseconds(now: now).sorted(by: { $0.key < $1.key }) {
            text += "stallwatch_stalled_seconds{thread=\"\(escapedLabelValue(thread))\"} \(seconds(stalled))\n"
        }
        histogram(
            &text, "stallwatch_stall_duration_seconds", metrics.stallDurations,
            help: "Lengths of finished stalls, from the last transition before each to the first after it.")
        let busy = BusyPeriodBuckets.cumulative(metrics.allBusyPeriods)
        family(
            &text, "stallwatch_loop_busy_seconds", type: "histogram",
            help: "Busy periods of the watched processes' main run loops, waking to sleeping (each counted within"
                + " 6.25 % of its length; the sum estimated as precisely).")
        buckets(&text, "stallwatch_loop_busy_seconds", bounds: BusyPeriodBuckets.bounds, cumulative: busy.counts)
        text += "stallwatch_loop_busy_seconds_sum \(number(busy.sumSeconds))\n"
        text += "stallwatch_loop_busy_seconds_count \(busy.count)\n"
        family(
            &text, "stallwatch_watched_threads", type: "gauge",
            help: "Threads whose loops are watched now.")
        text += "stallwatch_watched_threads \(metrics.watchedThreads)\n"
        histogram(
            &text, "stallwatch_capture_seconds", metrics.captureDurations,
            help: "Time spent capturing and naming each stall's stacks, all its samples together.")
        return text
    }

    private static func family(_ text: inout String, _ name: String, type: String, help: String) {
        text += "# HELP \(name) \(escapedHelp(help))\n# TYPE \(name) \(type)\n"
    }

    private static func histogram(_ text: inout String, _ name: String, _ histogram: BucketHistogram, help: String) {
        family(&text, name, type: "histogram", help: help)
        buckets(&text, name, bounds: histogram.bounds, cumulative: histogram.cumulativeCounts)
        text += "\(name)_sum \(seconds(histogram.sumNanoseconds))\n"
        text += "\(name)_count \(histogram.count)\n"
    }

    private static func buckets(_ text: inout String, _ name: String, bounds: [UInt64], cumulative: [UInt64]) {
        for (index, count) in cumulative.enumerated() {
            let bound = index < bounds.count ? seconds(bounds[index]) : "+Inf"
            text += "\(name)_bucket{le=\"\(bound)\"} \(count)\n"
        }
    }

    /// Nanoseconds as seconds, exactly, in decimal: `0.0025`, `1`, `12.000000001`.
    static func seconds(_ nanoseconds: UInt64) -> String {
        let whole = nanoseconds / 1_000_000_000
        let fraction = nanoseconds % 1_000_000_000
        guard fraction > 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// A float as Go's `strconv.ParseFloat` (Prometheus's parser) reads it.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    /// A label value with `\`, `"` and line feeds escaped, as the text format requires.
    public static func escapedLabelValue(_ value: String) -> String { escaped(value, quotes: true) }

    /// A `# HELP` text with `\` and line feeds escaped (its quotes stay as they are).
    static func escapedHelp(_ value: String) -> String { escaped(value, quotes: false) }

    private static func escaped(_ value: String, quotes: Bool) -> String {
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"" where quotes: escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
