// Where reports go: stdout or a file opened for appending, one unbuffered write per record.
import FoundationEssentials
import Glibc
import StallwatchCollector
import StallwatchCore
import StallwatchReport
import StallwatchSystem

/// Renders records in the chosen format and writes each as soon as it is rendered.
///
/// Each record is one `write(2)` sequence on an unbuffered descriptor, so a record is on disk (or in the pipe) before
/// the next event is handled and nothing is lost if stallwatch is killed afterwards. If the reader goes away (a
/// closed pipe), reporting stops and the watched process keeps running undisturbed.
final class ReportOutput: CollectorOutput {
    let descriptor: Int32
    let isStandardOutput: Bool
    private var reporter: any Reporter
    /// Whether a record goes out the moment a stall is detected (`run`; `attach` writes each stall once, at its end).
    private let writesDetectedRecords: Bool
    /// What keeps running when reports cannot be written: "the workload" (`run`), "the process" (`attach`).
    private let watched: String
    private(set) var failed = false
    /// `--html` and `--export`: the run's records, kept for the files written after the summary.
    private let exports: ExportRecorder?

    /// - Parameters:
    ///   - path: `nil` or `-` for stdout, otherwise a file to append to (created with mode 0644).
    init(
        path: String?, format: OutputFormat, color: ColorChoice, clock: WallClock, writesDetectedRecords: Bool,
        watched: String, exports: [ExportRequest] = []
    ) throws(StallwatchError) {
        if let path, path != WatchOptions.standardOutputPath {
            do {
                descriptor = try Syscall.call("open") { open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) }
            } catch {
                throw .cannotOpenOutput(path, reason: error.reason)
            }
            isStandardOutput = false
        } else {
            descriptor = STDOUT_FILENO
            isStandardOutput = true
        }
        reporter = ReportFormat.reporter(
            format, clock: clock, colored: Self.wantsColor(color, descriptor: descriptor))
        self.exports = exports.isEmpty ? nil : ExportRecorder(requests: exports, clock: clock)
        self.writesDetectedRecords = writesDetectedRecords
        self.watched = watched
    }

    func stallDetected(_ stall: StallReport) {
        if writesDetectedRecords { write(reporter.renderDetected(stall)) }
    }
    func stallFinished(_ stall: StallReport) {
        write(reporter.render(stall))
        exports?.record(stall)
    }
    func frameRate(_ frames: FrameRateReport) {
        write(reporter.render(frames))
        exports?.record(frames)
    }
    /// The summary ends the run: the `--html` and `--export` files are written after it.
    func write(_ summary: RunSummary) {
        write(reporter.render(summary))
        exports?.finish(summary)
    }

    private func write(_ text: String) {
        guard !failed, !text.isEmpty else { return }
        do {
            try FileDescriptor.writeAll(text.utf8, to: descriptor)
        } catch {
            failed = true
            Diagnostics.warning("cannot write reports (\(error.reason)); \(watched) keeps running")
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

/// The reporter for each `--format`.
enum ReportFormat {
    static func reporter(_ format: OutputFormat, clock: WallClock, colored: Bool) -> any Reporter {
        switch format {
        case .json: JSONLinesReporter(clock: clock, host: HostName.current)
        case .text: TextReporter(clock: clock, colored: colored)
        }
    }
}
