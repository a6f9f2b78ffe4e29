// Reads files under /proc, whose reported size is zero: Foundation's whole-file readers stop after one read.
import Foundation

enum ProcFile {
    /// The whole text of a /proc file, or nil if it cannot be read.
    ///
    /// Uses the throwing read: a process can exit between the open and the read, which then fails with
    /// ESRCH, and `readDataToEndOfFile()` would trap on that instead of reporting it.
    static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The whole content of a /proc file as bytes, for scanning without decoding it all.
    static func bytes(_ path: String) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.readToEnd()).map { [UInt8]($0) }
    }
}
