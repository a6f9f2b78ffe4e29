// The option values of `stallwatch report`, and the `--html`/`--export` files `run`, `demo` and `attach` also take.
import StallwatchExport

/// One file to write in a format: `--export FORMAT=FILE`, or `--html FILE`.
public struct ExportRequest: Equatable, Sendable {
    public var format: ExportFormat
    /// A file (written whole or not at all), a device or FIFO (written directly), or `-` for stdout.
    public var path: String

    public init(format: ExportFormat, path: String) {
        self.format = format
        self.path = path
    }

    /// The option that asked for it, as messages name it (an export request: `--output` is the primary's).
    var option: String {
        switch format {
        case .html: "'--html'"
        default: "'--export'"
        }
    }
}

/// `stallwatch report [<options>] <file> ...`.
public struct ReportOptions: Equatable, Sendable {
    /// The NDJSON inputs, in order; `-` is stdin.
    public var inputs: [String]
    /// `--format`; `nil` when not given (text, unless only `--html`/`--export` files were asked for).
    public var format: ExportFormat?
    /// `--output FILE`; `nil` or `-` is stdout.
    public var output: String?
    public var color: ColorChoice
    /// `--html FILE` and `--export FORMAT=FILE`, each written as well.
    public var exports: [ExportRequest]

    public init(
        inputs: [String], format: ExportFormat? = nil, output: String? = nil, color: ColorChoice = .auto,
        exports: [ExportRequest] = []
    ) {
        self.inputs = inputs
        self.format = format
        self.output = output
        self.color = color
        self.exports = exports
    }

    /// What goes to `--output` (or stdout): the `--format`, unless only export files were asked for.
    public var primary: ExportRequest? {
        if format == nil, output == nil, !exports.isEmpty { return nil }
        return ExportRequest(format: format ?? .text, path: output ?? WatchOptions.standardOutputPath)
    }
}
