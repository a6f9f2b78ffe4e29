// `stallwatch report`'s default output: the stalls of every input grouped by fingerprint, most stalled time first.
import StallwatchAggregate
import StallwatchReport

/// A plain-text summary: one heading line for all inputs, then one block per fingerprint with its count, stalled
/// time (total, p50, p95, max), first and last seen, runs and hosts, and culprit.
public struct TextSummaryExporter: StallExporter {
    let colored: Bool

    public init(colored: Bool = false) {
        self.colored = colored
    }

    public func export(_ collection: StallCollection) -> [UInt8] {
        Array(text(collection).utf8)
    }

    /// Symbols, paths, process and host names come from the records, so from the watched programs: each is escaped
    /// (``TerminalText``) so none can forge a line or send a terminal an escape sequence.
    static func safe(_ text: String) -> String { TerminalText.escaped(text) }

    func text(_ collection: StallCollection) -> String {
        let groups = FingerprintGroup.groups(of: collection)
        let hosts = Set(collection.stalls.map(\.host) + collection.runs.map(\.host))
        let total = collection.stalls.reduce(0) { $0 + $1.knownDurationMs }
        var output =
            "\(Self.count(collection.stalls.count, "stall")) (\(Self.milliseconds(total)) stalled)"
            + " in \(Self.count(collection.runs.count, "run")) on \(Self.count(hosts.count, "host")),"
            + " \(Self.count(groups.count, "fingerprint")), from \(Self.count(collection.sources.count, "input"))"
            + (collection.deadlocks.isEmpty ? "" : "; \(Self.count(collection.deadlocks.count, "deadlock"))") + "\n"
        for (rank, group) in groups.enumerated() {
            let culprit = group.culprit.map { collection.frames[Int($0)] }
            let name = culprit.map { Self.safe($0.displayName) } ?? "no culprit (no frame of the program's own)"
            output += "\n\(rank + 1). \(bold(name))  [\(Self.safe(group.fingerprint))]\n"
            var whereLine: [String] = []
            if let location = culprit?.location { whereLine.append(Self.safe(location)) }
            if let callout = group.callout { whereLine.append("\(Self.safe(callout)) callout") }
            whereLine.append(Self.safe(group.process))
            output += "   " + whereLine.joined(separator: ", ") + "\n"
            let notes =
                (group.unfinished > 0 ? ["\(group.unfinished) unfinished"] : [])
                + (group.suppressed > 0 ? ["\(group.suppressed) shortened by --rate-limit"] : [])
            let unfinished = notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))"
            output +=
                "   \(Self.count(group.stalls.count, "stall"))\(unfinished): total \(Self.milliseconds(group.totalMs))"
            if let p50 = group.p50Ms, let p95 = group.p95Ms, let max = group.maxMs {
                output +=
                    ", p50 \(Self.milliseconds(p50)), p95 \(Self.milliseconds(p95)), max \(Self.milliseconds(max))"
            }
            output += "\n"
            output +=
                "   in \(Self.count(group.runs, "run")) on \(Self.count(group.hosts.count, "host"))"
                + " (\(group.hosts.map(Self.safe).joined(separator: ", ")));"
                + " first \(RFC3339.text(milliseconds: group.firstSeenMs)),"
                + " last \(RFC3339.text(milliseconds: group.lastSeenMs))\n"
        }
        output += blockers(collection)
        return output
    }

    /// Stalled time by what the threads waited for, and every deadlock; empty when no record says.
    func blockers(_ collection: StallCollection) -> String {
        let groups = BlockerGroup.groups(of: collection)
        var output = ""
        if !groups.isEmpty {
            output += "\nWhat the stalled threads waited for, by stalled time:\n"
            for group in groups {
                let percent = String(Int((group.share * 100).rounded()))
                output +=
                    "   \(String(repeating: " ", count: max(0, 3 - percent.count)) + percent) % (\(Self.milliseconds(group.totalMs)),"
                    + " \(Self.count(group.stalls.count, "stall"))) waiting on \(Self.safe(group.label))\n"
            }
        }
        for deadlock in collection.deadlocks {
            output +=
                "\n" + bold("DEADLOCK") + " in \(Self.safe(deadlock.process)) (pid \(deadlock.pid)):"
                + " \(Self.safe(deadlock.summary))\n"
        }
        return output
    }

    private func bold(_ text: String) -> String {
        colored ? "\u{1B}[1m\(text)\u{1B}[0m" : text
    }

    static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }

    /// `640 ms`, `1.25 s`.
    static func milliseconds(_ value: Double) -> String {
        if value >= 1000 { return "\(((value / 10).rounded()) / 100) s" }
        return "\(Int(value.rounded())) ms"
    }
}
