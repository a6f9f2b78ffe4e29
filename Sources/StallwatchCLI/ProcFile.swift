// Reads files under /proc, whose reported size is zero: Foundation's whole-file readers stop after one read.
import Foundation

enum ProcFile {
    /// The whole text of a /proc file, or nil if it cannot be read.
    static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }
}
