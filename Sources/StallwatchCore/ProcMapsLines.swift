// Picking lines out of /proc/PID/maps without decoding the whole file: a Swift process maps hundreds of regions,
// and String splitting of that text cost a one-shot `stallwatch stack` milliseconds.

/// The lines of a `/proc/PID/maps` text that end with a given suffix, found on its bytes.
public enum ProcMapsLines {
    /// The lines of `maps` ending with `suffix` (e.g. `[vdso]`, ` (deleted)`), as strings, in order.
    public static func ending(with suffix: String, in maps: [UInt8]) -> [String] {
        let tail = Array(suffix.utf8)
        var found: [String] = []
        var start = 0
        while start < maps.count {
            var end = start
            while end < maps.count && maps[end] != UInt8(ascii: "\n") { end += 1 }
            if end - start >= tail.count && maps[(end - tail.count)..<end].elementsEqual(tail) {
                found.append(String(decoding: maps[start..<end], as: UTF8.self))
            }
            start = end + 1
        }
        return found
    }

    /// The start and end addresses of a maps line (`7f..-7f.. r-xp ...`).
    public static func range(of line: String) -> Range<UInt64>? {
        guard let field = line.split(separator: " ", maxSplits: 1).first else { return nil }
        let bounds = field.split(separator: "-").compactMap { UInt64($0, radix: 16) }
        return bounds.count == 2 && bounds[0] < bounds[1] ? bounds[0]..<bounds[1] : nil
    }
}
