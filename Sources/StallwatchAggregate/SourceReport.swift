// What was read from one input and what was wrong with it, worded once per input.

import StallwatchCore

/// The outcome of reading one input: how many records it held and the lines that could not be used whole.
public struct SourceReport: Sendable, Equatable {
    /// The input's name as given (`-` for stdin).
    public var name: String
    /// Lines read, counting a last line without a newline.
    public var lines = 0
    /// Lines that were stallwatch records (an `event` and a `schemaVersion`).
    public var records = 0
    /// `stall` records, and `stall-detected` records never followed by theirs.
    public var stalls = 0
    /// Every problem, in line order.
    public var issues: [Issue] = []
    /// Set when the input could not be read at all (missing file, permissions, a read error).
    public var readError: String?

    public init(name: String) {
        self.name = name
    }

    /// One problem with one line.
    public struct Issue: Sendable, Equatable {
        public var line: Int
        public var kind: Kind

        public enum Kind: Sendable, Equatable {
            /// The line is not JSON (the parser's message); the line is skipped.
            case notJSON(String)
            /// The last line has no newline and is not whole JSON: the writer was cut short.
            case truncated
            /// JSON, but not a stallwatch record (no `event` or `schemaVersion`).
            case notARecord
            /// A record of a kind this version does not know; skipped.
            case unknownEvent(String)
            /// Keys this version does not know; the rest of the record is read.
            case unknownKeys([String])
            /// A schema version newer than this reader's: read as far as the known keys go.
            case newerSchema(Int)
            /// Schema version 1, which has no fingerprints; skipped.
            case olderSchema(Int)
            /// A stall record without a key it cannot do without; skipped.
            case missingKey(String)
        }
    }

    /// The one warning for this input, or `nil` when every line was read whole.
    public var warning: String? {
        guard !issues.isEmpty else { return nil }
        var parts: [String] = []
        func lineList(_ lines: [Int]) -> String {
            let shown = lines.prefix(5).map(String.init).joined(separator: ", ")
            let label = lines.count == 1 ? "line" : "lines"
            return lines.count > 5 ? "\(label) \(shown) and \(lines.count - 5) more" : "\(label) \(shown)"
        }
        func collect(_ label: String, _ matches: (Issue.Kind) -> Bool) {
            let lines = issues.filter { matches($0.kind) }.map(\.line)
            if !lines.isEmpty { parts.append("\(label) (\(lineList(lines)))") }
        }
        collect("skipped lines that are not JSON") { if case .notJSON = $0 { true } else { false } }
        collect("skipped a last line cut short") { $0 == .truncated }
        collect("skipped JSON lines that are not stallwatch records") { $0 == .notARecord }
        var events: [String] = []
        var keys: [String] = []
        var newer: Set<Int> = []
        for issue in issues {
            switch issue.kind {
            case .unknownEvent(let name) where !events.contains(name): events.append(name)
            case .unknownKeys(let names): keys += names.filter { !keys.contains($0) }
            case .newerSchema(let version): newer.insert(version)
            default: break
            }
        }
        let quotedEvents = events.map { "'\($0)'" }.joined(separator: ", ")
        collect("skipped unknown events \(quotedEvents)") { if case .unknownEvent = $0 { true } else { false } }
        let quotedKeys = keys.prefix(8).map { "'\($0)'" }.joined(separator: ", ")
        collect("ignored unknown keys \(quotedKeys)") { if case .unknownKeys = $0 { true } else { false } }
        if let version = newer.max() {
            collect(
                "read schema version \(version) records as version \(RecordSchema.version)"
            ) { if case .newerSchema = $0 { true } else { false } }
        }
        collect("skipped schema version 1 records (no fingerprints)") {
            if case .olderSchema = $0 { true } else { false }
        }
        collect("skipped stall records without a fingerprint or start") {
            if case .missingKey = $0 { true } else { false }
        }
        return "\(name): " + parts.joined(separator: "; ")
    }
}
