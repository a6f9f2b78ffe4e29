// `--html` and `--export` on `run`, `demo` and `attach`: the run's records, merged as `stallwatch report` merges
// files, written when the summary is.
import Glibc
import StallwatchAggregate
import StallwatchCore
import StallwatchExport
import StallwatchReport
import StallwatchSystem

/// Keeps a run's stalls (as the JSON lines `--format json` would write, read back by the same reader as
/// `stallwatch report`), then writes every requested file once the run's summary is known.
final class ExportRecorder {
    private let requests: [ExportRequest]
    private let reporter: JSONLinesReporter
    private var merger = StallMerger()

    init(requests: [ExportRequest], clock: WallClock) {
        self.requests = requests
        reporter = JSONLinesReporter(clock: clock, host: HostName.current)
        merger.beginSource(named: "this run")
    }

    func record(_ stall: StallReport) { read(reporter.render(stall)) }
    func record(_ frames: FrameRateReport) { read(reporter.render(frames)) }
    func record(_ deadlock: DeadlockReport) { read(reporter.render(deadlock)) }

    /// Writes the files; one that cannot be written is a warning, as a `--junit` file is.
    func finish(_ summary: RunSummary) {
        read(reporter.render(summary))
        let collection = merger.finish()
        for request in requests {
            do {
                try OutputFile.write(request.format.exporter().export(collection), to: request.path)
            } catch {
                Diagnostics.warning(
                    "cannot write the \(request.format.rawValue) file '\(request.path)': \(error.reason)")
            }
        }
    }

    private func read(_ lines: String) {
        var text = lines
        text.withUTF8 { buffer in
            var start = 0
            for index in buffer.indices where buffer[index] == 0x0A {
                merger.read(line: UnsafeBufferPointer(rebasing: buffer[start..<index]))
                start = index + 1
            }
        }
    }
}

/// The `host` key of JSON records: `$STALLWATCH_HOST` if set, else the machine's host name.
enum HostName {
    static let current: String = {
        if let name = getenv("STALLWATCH_HOST").map({ String(cString: $0) }), !name.isEmpty { return name }
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
