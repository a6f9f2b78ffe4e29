// The options of `stallwatch report`, and `--html`/`--export`, which `run`, `demo` and `attach` share with it.
import StallwatchExport

extension ArgumentDefinitions {
    static let reportAbstract = "Merge JSON reports; write a summary, an HTML page, flame graphs or profiles."

    static let exportOptions: [ArgumentDefinition] = [
        ArgumentDefinition(
            key: .html, names: ["--html"], valueName: "file",
            abstract: "Also write an HTML page (timeline, flame graphs, table of fingerprints) to <file>;"
                + " the same as --export html=<file>."),
        ArgumentDefinition(
            key: .export, names: ["--export"], valueName: "format=file",
            abstract: "Also write <file> in <format> ("
                + ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")
                + "); repeat for more files. A file is written whole or not at all."),
    ]

    static let reportOptions: [ArgumentDefinition] =
        [
            ArgumentDefinition(
                key: .reportFormat, names: ["--format"], valueName: "format",
                abstract: "What to write: text (stalls grouped by fingerprint), folded stacks, speedscope JSON,"
                    + " Chrome trace JSON, gzipped pprof or an HTML page. (values: "
                    + ExportFormat.allCases.map(\.rawValue).joined(separator: ", ") + "; default: text)"),
            ArgumentDefinition(
                key: .output, names: ["--output"], valueName: "file",
                abstract: "Write to <file> instead of stdout, whole or not at all; '-' means stdout."),
            ArgumentDefinition(
                key: .color, names: ["--color"], valueName: "color",
                abstract: "Color the text summary; auto colors only a terminal whose TERM is not dumb."
                    + " (values: auto, always, never; default: auto)"),
        ] + exportOptions
}
