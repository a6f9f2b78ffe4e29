// One thread's callgrind output, read for what the instructions section needs: the thread's total, and the
// instructions executed inside one object's own code.

/// The instructions a callgrind output file (one thread's, `--separate-threads=yes`) counts, by object.
///
/// Exclusive counts, per object (`ob=`): each cost line belongs to the current function's object; the line after a
/// `calls=` line is the inclusive cost of that call, counted where the callee's own lines are, so it is skipped.
/// Object names are compressed in the format (`ob=(3) /path` the first time, `ob=(3)` after), and so are expanded
/// here. Function names do not matter: the agent's `CFRunLoopRunSpecific` and CoreFoundation's share one, and are
/// told apart by their objects alone.
struct CallgrindProfile {
    /// The `summary:` line's count.
    let total: UInt64
    /// Exclusive instructions by object path.
    let byObject: [String: UInt64]

    init?(text: String) {
        var total: UInt64?
        var names: [String: String] = [:]
        var current: String?
        var byObject: [String: UInt64] = [:]
        var skipNext = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("summary: ") {
                total = UInt64(line.dropFirst("summary: ".count).split(separator: " ").first ?? "")
            } else if line.hasPrefix("ob=") {
                current = Self.name(of: line.dropFirst(3), in: &names)
            } else if line.hasPrefix("cob=") {
                // The callee's object, for the call that follows: its name may be defined here first.
                _ = Self.name(of: line.dropFirst(4), in: &names)
            } else if line.hasPrefix("calls=") {
                skipNext = true
            } else if let first = line.first, first.isNumber || first == "+" || first == "-" || first == "*" {
                if skipNext {
                    skipNext = false
                    continue
                }
                guard let object = current, let cost = line.split(separator: " ").last.flatMap({ UInt64($0) }) else {
                    continue
                }
                byObject[object, default: 0] += cost
            }
        }
        guard let total else { return nil }
        self.total = total
        self.byObject = byObject
    }

    /// The instructions executed in objects whose path ends with `suffix`.
    func instructions(inObjectEndingWith suffix: String) -> UInt64 {
        byObject.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +)
    }

    /// `(id) name` defines a compressed name, `(id)` refers to one, a bare name is itself.
    private static func name(of spec: Substring, in names: inout [String: String]) -> String {
        guard spec.hasPrefix("("), let close = spec.firstIndex(of: ")") else { return String(spec) }
        let id = String(spec[spec.index(after: spec.startIndex)..<close])
        let rest = spec[spec.index(after: close)...].drop { $0 == " " }
        if !rest.isEmpty { names[id] = String(rest) }
        return names[id] ?? id
    }
}
