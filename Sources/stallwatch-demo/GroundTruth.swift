// Everything the demo writes to stderr: the banner, one ground-truth line per stall, and usage errors.
import Foundation
import Glibc

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
    ///
    /// A failed write is ignored: with stderr closed (`2>&-`) or a reader gone, the demo still runs its stalls
    /// (FileHandle's `write(_:)` traps on any error).
    fileprivate static func write(_ line: String) {
        var bytes = Array("stallwatch-demo: \(line)\n".utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                Glibc.write(STDERR_FILENO, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// One stall as the demo itself measured it: the ground truth stallwatch's reports are checked against.
struct StallMeasurement {
    let scenario: Scenario
    let index: Int
    let start: MonotonicInstant
    /// When CPU-bound culprits stop working; blocking culprits are handed the duration instead.
    let deadline: MonotonicInstant
    /// The function to blame, where a scenario has more than one (`event-loops`).
    let culprit: String?
    /// The stalled thread, when it is not the main one: its name and tid.
    let thread: (name: String, tid: Int32)?

    /// Starts measuring at the top of the callout (or handler) that is about to stall.
    init(
        scenario: Scenario, index: Int, duration: Duration, culprit: String? = nil,
        thread: (name: String, tid: Int32)? = nil
    ) {
        self.scenario = scenario
        self.index = index
        self.culprit = culprit
        self.thread = thread
        start = .now()
        deadline = start + duration
    }

    /// Prints `stallwatch-demo: stall scenario=cpu index=1 start_ns=... duration_ms=600.1 culprit=Type.method`, and
    /// ` thread=NAME tid=N` for a stall off the main thread.
    func finish() {
        let elapsed = MonotonicInstant.now() - start
        let place = thread.map { " thread=\($0.name) tid=\($0.tid)" } ?? ""
        DemoStderr.write(
            "stall scenario=\(scenario.rawValue) index=\(index) start_ns=\(start.nanoseconds)"
                + " duration_ms=\(String(format: "%.1f", elapsed.milliseconds))"
                + " culprit=\(culprit ?? scenario.culprit ?? "none")\(place)"
        )
    }
}
