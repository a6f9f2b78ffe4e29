// Whole-file reads with plain system calls: /proc files report a size of 0, and a process may vanish mid-read.
import Glibc

/// Reads files to their end, however their size is reported.
public enum FileBytes {
    /// What a bounded read found.
    public enum Bounded: Equatable, Sendable {
        case bytes([UInt8])
        /// The file (or device: `/dev/zero`) held more than the limit.
        case tooLarge
        /// It could not be opened or read: the `errno`.
        case unreadable(Int32)
    }

    /// Every byte of `path` if there are at most `limit`: a file the user names may be a device without an end.
    public static func read(_ path: String, limit: Int) -> Bounded {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .unreadable(errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        // Small first: most reads are /proc files of a few hundred bytes, read many times a second when threads
        // are watched from /proc; a file that fills the chunk gets a bigger one, up to 64 KiB.
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(descriptor, &chunk, chunk.count)
            if count > 0 {
                guard bytes.count + count <= limit else { return .tooLarge }
                bytes.append(contentsOf: chunk[..<count])
                if count == chunk.count, chunk.count < 65536 {
                    chunk = [UInt8](repeating: 0, count: chunk.count * 4)
                }
            } else if count == 0 {
                return .bytes(bytes)
            } else if errno != EINTR {
                return .unreadable(errno)
            }
        }
    }

    /// Every byte of `path`, or nil if it cannot be opened or a read fails (ESRCH when a /proc process exits).
    public static func read(_ path: String) -> [UInt8]? {
        guard case .bytes(let bytes) = read(path, limit: .max) else { return nil }
        return bytes
    }

    /// The file's text, decoded as UTF-8 (invalid bytes replaced).
    public static func text(_ path: String) -> String? {
        read(path).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line breaks (what /proc files end with).
    public func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
