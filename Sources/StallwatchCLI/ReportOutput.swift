// Where reports go: stdout or a file opened for appending, one unbuffered write per record.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchReport

/// Writes rendered records to their destination as soon as they are rendered.
///
/// Each record is one `write(2)` sequence on an unbuffered descriptor, so a record is on disk (or in the
/// pipe) before the next event is handled and nothing is lost if stallwatch is killed afterwards. If the
/// reader goes away (a closed pipe), reporting stops and the workload keeps running undisturbed.
final class ReportOutput {
    let descriptor: Int32
    let isStandardOutput: Bool
    private var reporter: any Reporter
    private(set) var failed = false

    /// - Parameters:
    ///   - path: `nil` or `-` for stdout, otherwise a file to append to (created with mode 0644).
    init(path: String?, format: OutputFormat, color: ColorChoice, clock: WallClock) throws(RunError) {
        if let path, path != "-" {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw .cannotOpenOutput(path, reason: String(cString: strerror(errno)))
            }
            self.descriptor = descriptor
            self.isStandardOutput = false
        } else {
            self.descriptor = STDOUT_FILENO
            self.isStandardOutput = true
        }
        switch format {
        case .json: reporter = JSONLinesReporter(clock: clock)
        case .text: reporter = TextReporter(clock: clock, colored: Self.wantsColor(color, descriptor: descriptor))
        }
    }

    func write(_ stall: StallReport) { write(reporter.render(stall)) }
    func writeDetected(_ stall: StallReport) { write(reporter.renderDetected(stall)) }
    func write(_ summary: RunSummary) { write(reporter.render(summary)) }
    func write(_ frames: FrameRateReport) { write(reporter.render(frames)) }

    private func write(_ text: String) {
        guard !failed, !text.isEmpty else { return }
        if !FileDescriptorWriter.writeAll(text, to: descriptor) {
            failed = true
            Terminal.writeError(
                "stallwatch: warning: cannot write reports (\(String(cString: strerror(errno))));"
                    + " the workload keeps running\n")
        }
    }

    func close() {
        if !isStandardOutput { _ = Glibc.close(descriptor) }
    }

    /// Colour only on a terminal whose `TERM` is not `dumb`, and never with `NO_COLOR` set.
    static func wantsColor(_ choice: ColorChoice, descriptor: Int32) -> Bool {
        switch choice {
        case .always: return true
        case .never: return false
        case .auto:
            let environment = ProcessInfo.processInfo.environment
            return isatty(descriptor) == 1 && environment["TERM"] != "dumb" && environment["NO_COLOR"] == nil
        }
    }
}
