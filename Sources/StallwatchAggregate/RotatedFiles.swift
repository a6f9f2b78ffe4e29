// The files of a `--rotate` set among `stallwatch report`'s inputs, put in the order they were written.

/// Finds the sets `stallwatch run --output FILE --rotate …` leaves (`FILE`, `FILE.1`, `FILE.2`, …: the higher the
/// number, the older) and orders each oldest first, so that its records are read in the order they were written.
///
/// A shell's `FILE*` gives `FILE FILE.1 FILE.10 FILE.2`; read so, a run would begin in its newest file and a stall
/// detected in `FILE.1` and ended in `FILE` would count twice. A set takes the place of its first member among the
/// inputs; every other input keeps its place.
public enum RotatedFiles {
    /// The inputs in reading order; `continuing` is true for a file that goes on from the one before (the next of its
    /// set), which ``StallMerger/beginSource(named:continuing:)`` reads as one stream with it.
    public static func order(_ names: [String]) -> [(name: String, continuing: Bool)] {
        let parsed = names.map(split)
        // Bases with at least one numbered file: only they form sets.
        let rotatedBases = Set(parsed.compactMap { $0.number == nil ? nil : $0.base })
        var placed: Set<String> = []
        var order: [(name: String, continuing: Bool)] = []
        for (index, name) in names.enumerated() {
            let base = parsed[index].base
            guard rotatedBases.contains(base) else {
                order.append((name, false))
                continue
            }
            guard placed.insert(base).inserted else { continue }
            let members = names.indices.filter { parsed[$0].base == base }
                .sorted { (parsed[$0].number ?? 0) > (parsed[$1].number ?? 0) }
            for (position, member) in members.enumerated() { order.append((names[member], position > 0)) }
        }
        return order
    }

    /// `FILE.3` → (`FILE`, 3); a name without a numeric suffix is its own base.
    static func split(_ name: String) -> (base: String, number: Int?) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, nil) }
        let suffix = name[name.index(after: dot)...]
        guard !suffix.isEmpty, suffix.count <= 6, suffix.allSatisfy({ $0.isASCII && $0.isNumber }),
            let number = Int(suffix), number > 0, !name[..<dot].hasSuffix("/")
        else { return (name, nil) }
        return (String(name[..<dot]), number)
    }
}
