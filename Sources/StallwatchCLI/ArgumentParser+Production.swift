// The options for a long watch of a service (`run`, `demo`, `attach`): `--rate-limit` and `--rotate`, their help and
// their values.
import StallwatchCore

extension ArgumentDefinitions {
    static let rateLimit = ArgumentDefinition(
        key: .rateLimit, names: ["--rate-limit"], valueName: "n/duration",
        abstract: "Report the first <n> stalls of each fingerprint in each window of <duration> (s, m, h or d:"
            + " 2/1h, 5/10m) in full; later ones take one sample, the one that names their fingerprint, and get"
            + " a short record (\"suppressed\": true). The summary and the budgets count every stall."
            + " (default: off; library mode: \(RateLimit.libraryDefault))")

    static let rotate = ArgumentDefinition(
        key: .rotate, names: ["--rotate"], valueName: "size[,keep]",
        abstract: "With --output <file>: before a record would take <file> past <size> (K, M or G: 10M),"
            + " rename it <file>.1 (and <file>.1 <file>.2, …), keeping <keep> rotated files, and go on in a"
            + " fresh <file>; records are never split. 'stallwatch report <file>*' reads the set."
            + " (default keep: \(OutputRotation.defaultKeep))")
}

extension ArgumentParser {
    /// `--rate-limit` and `--rotate`.
    static func applyProduction(
        _ definition: ArgumentDefinition, value: String, to watch: inout WatchOptions,
        invalid: (String) -> UsageError
    ) throws(UsageError) {
        if definition.key == .rateLimit {
            switch RateLimit.parse(value) {
            case .success(let limit): watch.settings.rateLimit = limit
            case .failure(let failure): throw invalid(": \(failure)")
            }
        } else {
            switch OutputRotation.parse(value) {
            case .success(let rotation): watch.rotation = rotation
            case .failure(let failure): throw invalid(": \(failure)")
            }
        }
    }

    /// `--rotate` renames the `--output` file: without one (or with stdout) there is nothing to rotate.
    static func checkRotation(_ watch: WatchOptions, topic: HelpTopic) throws(UsageError) {
        guard watch.rotation != nil, watch.reportsGoToStandardOutput else { return }
        throw UsageError(
            message: "--rotate rotates the --output file, and the reports go to standard output; add --output FILE",
            topic: topic)
    }
}
