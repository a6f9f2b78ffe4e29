// Reads files under /proc, whose reported size is zero and whose process may exit mid-read.
import StallwatchCore

enum ProcFile {
    /// The whole text of a /proc file, or nil if it cannot be read (also when the process exits mid-read:
    /// ESRCH is a failed read, never a trap).
    static func read(_ path: String) -> String? {
        FileBytes.text(path)
    }

    /// The whole content of a /proc file as bytes, for scanning without decoding it all.
    static func bytes(_ path: String) -> [UInt8]? {
        FileBytes.read(path)
    }
}
