// `stallwatch report`: read and merge the inputs, say what was wrong with each, write every output asked for.
import Glibc
import StallwatchAggregate
import StallwatchCore
import StallwatchExport
import StallwatchSystem

/// Reads NDJSON reports, merges their stalls and writes the summary, page or profile.
enum ReportCommand {
    static func run(_ options: ReportOptions) throws(StallwatchError) -> Int32 {
        // An output over an input would destroy the records it is made from: refused before anything is read.
        let outputs =
            (options.primary.map { [($0.path, "'--output'")] } ?? []) + options.exports.map { ($0.path, $0.option) }
        for (path, option) in outputs {
            for input in options.inputs { try DistinctFiles.check(path, option, input, "the input") }
        }
        var merger = StallMerger()
        NDJSONInput.read(options.inputs, into: &merger) { notice in
            if case .waitingForWriter = notice {
                Diagnostics.note(notice.message)
            } else {
                Diagnostics.warning(notice.message)
            }
        }
        let collection = merger.finish()
        var status = ExitCode.success
        for source in collection.sources {
            if let reason = source.readError {
                let label = source.name == NDJSONInput.standardInputName ? "standard input" : "'\(source.name)'"
                Diagnostics.error(StallwatchError(message: "cannot read \(label): \(reason)", exitCode: 0))
                status = ExitCode.noSuchProcess
                continue
            }
            if let warning = source.warning { Diagnostics.warning(warning) }
            if source.records == 0 {
                Diagnostics.error(
                    StallwatchError(message: noRecordsMessage(source), exitCode: ExitCode.noRecords))
                if status == ExitCode.success { status = ExitCode.noRecords }
            }
        }
        // Nothing to draw from: every input failed.
        guard collection.sources.contains(where: { $0.readError == nil && $0.records > 0 }) else { return status }
        try write(collection, options.primary.map { [$0] } ?? [], options.exports, color: options.color)
        return status
    }

    static func noRecordsMessage(_ source: SourceReport) -> String {
        let name = source.name == NDJSONInput.standardInputName ? "standard input" : "'\(source.name)'"
        let lines = source.lines == 1 ? "1 line" : "\(source.lines) lines"
        return "\(name) has no stallwatch records (\(lines));"
            + " expected the output of 'stallwatch run --format json'"
    }

    /// Writes each requested output; one that fails does not keep the others from being written.
    static func write(
        _ collection: StallCollection, _ primary: [ExportRequest], _ exports: [ExportRequest], color: ColorChoice
    ) throws(StallwatchError) {
        var failure: StallwatchError?
        for request in primary + exports {
            let toTerminal = OutputFile.method(for: request.path) == .standardOutput && isatty(STDOUT_FILENO) == 1
            if request.format.isBinary, toTerminal {
                if let previous = failure { Diagnostics.error(previous) }
                failure = StallwatchError(
                    message: "not writing \(request.format.rawValue) (binary) to a terminal; use --output <file>",
                    exitCode: ExitCode.usage)
                continue
            }
            let colored = request.format == .text && toTerminal && ReportOutput.wantsColor(color, descriptor: 1)
            do {
                try OutputFile.write(request.format.exporter(colored: colored).export(collection), to: request.path)
            } catch  where error.errno == EPIPE && request.path == WatchOptions.standardOutputPath {
                // A reader that went away (`| head`) is not worth an error.
            } catch {
                if let previous = failure { Diagnostics.error(previous) }
                failure = StallwatchError(
                    message: "cannot write '\(request.path)': \(error.reason)", exitCode: ExitCode.cannotCreateOutput)
            }
        }
        if let failure { throw failure }
    }
}
