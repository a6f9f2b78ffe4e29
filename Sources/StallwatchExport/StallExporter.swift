// What every output of `stallwatch report` is: one type per format, turning a merged collection into a file.
import StallwatchAggregate

/// One output format of `stallwatch report` (and of `--export` on `run` and `attach`).
public protocol StallExporter {
    /// The whole file for `collection`.
    func export(_ collection: StallCollection) -> [UInt8]
}

/// The formats, by the name `--format` and `--export` take.
public enum ExportFormat: String, CaseIterable, Sendable {
    case text, folded, speedscope, trace, pprof, html

    /// The exporter that writes this format.
    public func exporter(colored: Bool = false) -> any StallExporter {
        switch self {
        case .text: TextSummaryExporter(colored: colored)
        case .folded: FoldedStacksExporter()
        case .speedscope: SpeedscopeExporter()
        case .trace: ChromeTraceExporter()
        case .pprof: PprofExporter()
        case .html: HTMLExporter()
        }
    }

    /// Whether the output is binary, so stdout on a terminal is no place for it.
    public var isBinary: Bool { self == .pprof }
}
