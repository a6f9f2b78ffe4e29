// Picking lines out of /proc/PID/maps without decoding the whole file: a Swift process maps hundreds of regions,
// and String splitting of that text cost a one-shot `stallwatch stack` milliseconds.

/// The lines of a `/proc/PID/maps` text that end with a given suffix, found on its bytes.
public enum ProcMapsLines {
    /// The lines of `maps` ending with `suffix` (e.g. `[vdso]`, ` (deleted)`), as strings, in order.
    public static func ending(with suffix: String, in maps: [UInt8]) -> [String] {
        let tail = Array(suffix.utf8)
        return lines(of: maps).filter { $0.count >= tail.count && $0.suffix(tail.count).elementsEqual(tail) }
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// The lines of a maps text, as slices of its bytes.
    static func lines(of maps: [UInt8]) -> [ArraySlice<UInt8>] {
        maps.split(separator: UInt8(ascii: "\n"))
    }

    /// The start and end addresses of a maps line (`7f..-7f.. r-xp ...`).
    public static func range(of line: String) -> Range<UInt64>? {
        guard let field = line.split(separator: " ", maxSplits: 1).first else { return nil }
        let bounds = field.split(separator: "-").compactMap { UInt64($0, radix: 16) }
        return bounds.count == 2 && bounds[0] < bounds[1] ? bounds[0]..<bounds[1] : nil
    }
}

/// A file's executable mapping: where its code is, and the file's load base (the start of its mapping at file
/// offset 0), from which frame offsets are counted.
public struct MappedCode: Codable, Equatable, Sendable {
    public let path: String
    public let start: UInt64
    public let end: UInt64
    public let base: UInt64

    public init(path: String, start: UInt64, end: UInt64, base: UInt64) {
        self.path = path
        self.start = start
        self.end = end
        self.base = base
    }
}

extension ProcMapsLines {
    /// The executable mappings of files (`r-xp ... /path`) in a maps text, each with its file's load base: the
    /// nearest mapping of the same file at offset 0 below it. (A loaded image's mappings are contiguous, its header
    /// first; the same file may also be mapped elsewhere, whole, by a reader such as libelf.)
    public static func executableFiles(in maps: [UInt8]) -> [MappedCode] {
        var code: [MappedCode] = []
        var lastBase: [String: UInt64] = [:]
        // Lines come in address order: the latest header seen is the nearest below.
        for case let mapping? in lines(of: maps).map(fileMapping) {
            if mapping.offset == 0 { lastBase[mapping.path] = mapping.start }
            if mapping.executable, let base = lastBase[mapping.path] {
                code.append(MappedCode(path: mapping.path, start: mapping.start, end: mapping.end, base: base))
            }
        }
        return code
    }

    /// `start-end perms offset dev inode /path`; nil for anonymous and special (`[heap]`) mappings.
    private static func fileMapping(_ line: ArraySlice<UInt8>) -> (
        path: String, start: UInt64, end: UInt64, offset: UInt64, executable: Bool
    )? {
        guard let slash = line.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let fields = line[..<slash].split(separator: UInt8(ascii: " "))
        guard fields.count >= 5, fields[1].count == 4 else { return nil }
        let bounds = fields[0].split(separator: UInt8(ascii: "-")).compactMap { hex($0) }
        guard bounds.count == 2, bounds[0] < bounds[1], let offset = hex(fields[2]) else { return nil }
        let path = String(decoding: line[slash...], as: UTF8.self)
        return (path, bounds[0], bounds[1], offset, fields[1][fields[1].startIndex + 2] == UInt8(ascii: "x"))
    }

    private static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        UInt64(String(decoding: digits, as: UTF8.self), radix: 16)
    }
}
