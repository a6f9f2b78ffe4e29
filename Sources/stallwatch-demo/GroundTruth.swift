// Everything the demo writes to stderr: the banner, one ground-truth line per stall, and usage errors.
import Foundation

/// The demo's stderr lines, whose formats tests parse; nothing else writes to stderr.
enum DemoStderr {
    /// The first line of every run: `stallwatch-demo: scenario=cpu stalls=2 duration_ms=600 period_ms=1500 pid=42`.
    ///
    /// A baseline run announces `stalls=0`, the number of ground-truth lines that will follow.
    static func announce(_ options: DemoOptions) {
        let stalls = options.scenario.culprit == nil ? 0 : options.stallCount
        write(
            "scenario=\(options.scenario.rawValue) stalls=\(stalls)"
                + " duration_ms=\(Int(options.stallDuration.milliseconds))"
                + " period_ms=\(Int(options.period.milliseconds)) pid=\(getpid())"
        )
    }

    /// `stallwatch-demo: modal scenario=modal index=1 duration_ms=600.2`: a modal session that must not be
    /// reported, with its measured length, so tests can tell it ran.
    static func modalSession(index: Int, length: Duration) {
        write("modal scenario=modal index=\(index) duration_ms=\(String(format: "%.1f", length.milliseconds))")
    }

    static func error(_ message: String) {
        write("error: \(message)")
    }

    /// One `write(2)` per line, unbuffered, so a line is never split or held back when the demo is killed.
    fileprivate static func write(_ line: String) {
        FileHandle.standardError.write(Data("stallwatch-demo: \(line)\n".utf8))
    }
}

/// One stall as the demo itself measured it: the ground truth stallwatch's reports are checked against.
struct StallMeasurement {
    let scenario: Scenario
    let index: Int
    let start: MonotonicInstant
    /// When CPU-bound culprits stop working; blocking culprits are handed the duration instead.
    let deadline: MonotonicInstant

    /// Starts measuring on the main thread, at the top of the callout that is about to stall.
    init(scenario: Scenario, index: Int, duration: Duration) {
        self.scenario = scenario
        self.index = index
        start = .now()
        deadline = start + duration
    }

    /// Prints `stallwatch-demo: stall scenario=cpu index=1 start_ns=... duration_ms=600.1 culprit=Type.method`.
    func finish() {
        let elapsed = MonotonicInstant.now() - start
        DemoStderr.write(
            "stall scenario=\(scenario.rawValue) index=\(index) start_ns=\(start.nanoseconds)"
                + " duration_ms=\(String(format: "%.1f", elapsed.milliseconds)) culprit=\(scenario.culprit ?? "none")"
        )
    }
}
