// Where reports go: stdout or a file opened for appending, one unbuffered write per record.
import FoundationEssentials
import Glibc
import StallwatchCollector
import StallwatchCore
import StallwatchReport
import StallwatchSystem

/// Renders records in the chosen format and writes each as soon as it is rendered.
///
/// Each record goes to a ``RecordWriter``, whose thread writes it at once with unbuffered `write(2)` calls: a record
/// is on disk (or in the pipe) moments after the event, and nothing is lost if stallwatch is killed afterwards, yet a
/// reader that stops reading never blocks the collector. If the reader goes away (a closed pipe) or falls too far
/// behind, records are lost, the watched process keeps running undisturbed, and ``lostRecords`` says so.
final class ReportOutput: CollectorOutput {
    let descriptor: Int32
    let isStandardOutput: Bool
    private var reporter: any Reporter
    /// Whether records go out while the watch goes on: at a stall's detection, and `--fps` readings (`run`;
    /// `attach` writes each stall once, at its end, and has no frame tick).
    private let writesProgressRecords: Bool
    /// What keeps running when reports cannot be written: "the workload" (`run`), "the process" (`attach`).
    private let watched: String
    private let writer: RecordWriter
    /// What ``close()`` found, once called.
    private var closed: Bool?
    /// How long the last records may take to reach a slow reader when the watch is over.
    static let finalDrainMilliseconds = 2000
    /// `--html` and `--export`: the run's records, kept for the files written after the summary.
    private let exports: ExportRecorder?

    /// `--rotate`: the file the writer writes, and rotates; nil otherwise.
    private let rotating: RotatingFile?

    /// - Parameters:
    ///   - path: `nil` or `-` for stdout, otherwise a file to append to (created with mode 0644).
    ///   - rotation: `--rotate`, for a `path` that is a file.
    init(
        path: String?, format: OutputFormat, color: ColorChoice, clock: WallClock, writesProgressRecords: Bool,
        watched: String, exports: [ExportRequest] = [], rotation: OutputRotation? = nil
    ) throws(StallwatchError) {
        if let path, let rotation, path != WatchOptions.standardOutputPath {
            let file = try RotatingFile(path: path, rotation: rotation)
            rotating = file
            descriptor = file.descriptor
            isStandardOutput = false
        } else if let path, path != WatchOptions.standardOutputPath {
            rotating = nil
            do {
                descriptor = try Syscall.call("open") { open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) }
            } catch {
                throw .cannotOpenOutput(path, reason: error.reason)
            }
            isStandardOutput = false
        } else {
            rotating = nil
            descriptor = STDOUT_FILENO
            isStandardOutput = true
        }
        reporter = ReportFormat.reporter(
            format, clock: clock, colored: Self.wantsColor(color, descriptor: descriptor))
        self.writesProgressRecords = writesProgressRecords
        self.exports = exports.isEmpty ? nil : ExportRecorder(requests: exports, clock: clock)
        self.watched = watched
        writer = RecordWriter(descriptor: descriptor, rotating: rotating) {
            Diagnostics.warning("\($0); \(watched) keeps running")
        }
    }

    func stallDetected(_ stall: StallReport) {
        if writesProgressRecords { write(reporter.renderDetected(stall)) }
    }
    func stallFinished(_ stall: StallReport) {
        write(reporter.render(stall))
        exports?.record(stall)
    }
    func deadlockFound(_ deadlock: DeadlockReport) {
        write(reporter.render(deadlock))
        exports?.record(deadlock)
    }
    func notice(_ text: String) {
        Diagnostics.note(text)
    }

    func frameRate(_ frames: FrameRateReport) {
        if writesProgressRecords { write(reporter.render(frames)) }
        exports?.record(frames)
    }
    /// The summary ends the run: the `--html` and `--export` files are written after it.
    func write(_ summary: RunSummary) {
        write(reporter.render(summary))
        exports?.finish(summary)
    }

    private func write(_ text: String) { writer.enqueue(text) }

    /// Whether records were lost so far: a write failed, or the reader fell behind.
    var lostRecords: Bool { writer.failure != nil || writer.dropped > 0 }

    /// What the summary says about lost records; nil when none were.
    var lossWarning: String? {
        let dropped = writer.dropped
        if let failure = writer.failure { return "reports could not be written (\(failure.reason))" }
        guard dropped > 0 else { return nil }
        return "\(dropped) record\(dropped == 1 ? " was" : "s were") dropped: the reader of the reports did not keep up"
    }

    /// Waits (boundedly) for the last records to be written, then closes the file; false if any record was lost.
    /// Idempotent: the first call decides.
    @discardableResult
    func close() -> Bool {
        if let closed { return closed }
        let complete = writer.finish(waitingUpTo: Self.finalDrainMilliseconds)
        closed = complete
        if !complete, writer.failure == nil {
            Diagnostics.warning(
                "the last reports were not all written: their reader did not read them within"
                    + " \(Self.finalDrainMilliseconds / 1000) s")
        }
        // Left open when the writer may still write: the number must not name another file meanwhile.
        if complete, !isStandardOutput {
            // Rotated, the writer's file is no longer the one first opened.
            if let rotating { rotating.close() } else { _ = Glibc.close(descriptor) }
        }
        return complete
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
