// Brendan Gregg's folded stacks, for flamegraph.pl and inferno: `outer;...;inner count`, one line per stack.
import StallwatchAggregate
import StallwatchReport

/// `frame;frame;frame count` per distinct stack, outermost frame first; the count is stalled milliseconds.
///
/// Lines are sorted, so equal inputs give equal files. A `;` in a name becomes `:` (it would split the frame), and
/// control characters in names are written as the visible escapes of every text output (``TerminalText``).
public struct FoldedStacksExporter: StallExporter {
    public init() {}

    public func export(_ collection: StallCollection) -> [UInt8] {
        var names: [Int32: String] = [:]
        func name(_ frame: Int32) -> String {
            if let known = names[frame] { return known }
            let text = Self.clean(collection.frames[Int(frame)].displayName)
            names[frame] = text
            return text
        }
        var totals: [String: Double] = [:]
        collection.forEachWeightedSample { sample in
            let path = collection.rootFirst(sample.stack).map(name)
            let line =
                path.isEmpty ? collection.stalls[sample.stall].missingStackName : path.joined(separator: ";")
            totals[line, default: 0] += sample.weightMs
        }
        var output = ""
        for (stack, weight) in totals.sorted(by: { $0.key < $1.key }) {
            let count = weight < 9e18 ? Int(weight.rounded()) : Int.max
            if count > 0 { output += "\(stack) \(count)\n" }
        }
        return Array(output.utf8)
    }

    /// Names come from the watched program's files: none may forge a line or reach a terminal as an escape.
    static func clean(_ name: String) -> String {
        String(TerminalText.escaped(name).map { $0 == ";" ? ":" : $0 })
    }
}
