// `stallwatch report`: input files and options in any order, and the values of --format, --html and --export.
import StallwatchCore
import StallwatchExport

extension ArgumentParser {
    /// `report [<options>] <file> ... [<options>]`: options may come before, between and after the files (`-` is
    /// stdin); after `--`, everything is a file.
    static func parseReport(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        if let request = builtInRequest(in: arguments, topic: .report) { return request }
        var parsed = ParsedOptions()
        var inputs: [String] = []
        var rest = arguments
        while !rest.isEmpty {
            let scan = try scanOptions(rest, topic: .report)
            try apply(scan.values, to: &parsed, topic: .report)
            if scan.afterTerminator {
                inputs += scan.operands
                break
            }
            let files = scan.operands.prefix { $0 == "-" || ($0 != "--" && !isOption($0)) }
            inputs += files
            rest = scan.operands[files.endIndex...]
        }
        guard !inputs.isEmpty else {
            throw UsageError(message: "Missing expected argument '<file> ...'", topic: .report)
        }
        if inputs.filter({ $0 == "-" }).count > 1 {
            throw UsageError(message: "Standard input ('-') can be read only once", topic: .report)
        }
        return .report(
            ReportOptions(
                inputs: inputs, format: parsed.reportFormat, output: parsed.watch.output, color: parsed.watch.color,
                exports: parsed.watch.exports))
    }

    /// `--format` of `report`, `--html FILE` and `--export FORMAT=FILE`.
    static func applyExport(
        _ definition: ArgumentDefinition, value: String, to parsed: inout ParsedOptions, topic: HelpTopic
    ) throws(UsageError) {
        let names = ExportFormat.allCases.map(\.rawValue)
        func invalid(_ reason: String) -> UsageError {
            UsageError(message: "The value '\(value)' is invalid for '\(definition.synopsis)'\(reason)", topic: topic)
        }
        switch definition.key {
        case .reportFormat:
            guard let format = ExportFormat(rawValue: value) else { throw invalid(choices(names)) }
            parsed.reportFormat = format
        case .html:
            guard !value.isEmpty else { throw invalid(": expected a file name, or '-' for stdout") }
            parsed.watch.exports.append(ExportRequest(format: .html, path: value))
        default:
            guard let equals = value.firstIndex(of: "=") else {
                throw invalid(": expected <format>=<file>, e.g. pprof=stalls.pb.gz")
            }
            let name = String(value[..<equals])
            let path = String(value[value.index(after: equals)...])
            guard let format = ExportFormat(rawValue: name) else {
                throw invalid(": unknown format '\(name)'" + choices(names))
            }
            guard !path.isEmpty else { throw invalid(": expected a file name after '='") }
            parsed.watch.exports.append(ExportRequest(format: format, path: path))
        }
    }
}
