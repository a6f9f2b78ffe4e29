// The `--output` file under `--rotate`: whole records appended, and the file renamed away between two records once
// the next would take it past its size.
import Glibc
import StallwatchCore
import StallwatchSystem

/// An append-only report file that rotates itself by size (``OutputRotation``), used by the record writer's thread
/// only.
///
/// Records are written whole, and a rotation happens only before a record, so every file of the set ends with a
/// complete record; `stallwatch report FILE*` reads the set oldest first as one stream, so a stall detected in one
/// file and ended in the next is one stall. A rotation that fails (a rename refused) says so once and leaves the
/// records going to the current file: rotation is given up, never a record.
final class RotatingFile: @unchecked Sendable {
    // @unchecked: opened by the command, then used by the writer's one thread until it has finished.
    let path: String
    let rotation: OutputRotation
    private(set) var descriptor: Int32
    private var size: Int
    private var gaveUp = false

    /// Opens `path` for appending (created with mode 0644); it must be a regular file, which can be renamed.
    init(path: String, rotation: OutputRotation) throws(StallwatchError) {
        self.path = path
        self.rotation = rotation
        (descriptor, size) = try Self.open(path)
    }

    private static func open(_ path: String) throws(StallwatchError) -> (Int32, Int) {
        let descriptor: Int32
        do {
            descriptor = try Syscall.call("open") { Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) }
        } catch {
            throw .cannotOpenOutput(path, reason: error.reason)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw StallwatchError(
                message: "--rotate needs a regular file, and --output '\(path)' is not one (a device, FIFO or"
                    + " socket cannot be renamed); leave --rotate out for it",
                exitCode: ExitCode.cannotCreateOutput)
        }
        return (descriptor, Int(status.st_size))
    }

    /// Writes one whole record, rotating first if it would take the file past its size.
    /// - Parameter warn: said once if rotating fails.
    func write(_ record: [UInt8], warn: (String) -> Void) throws(SystemError) {
        if !gaveUp, rotation.rotatesBefore(recordBytes: record.count, currentBytes: size) {
            if let failure = rotate() {
                gaveUp = true
                warn("cannot rotate --output '\(path)' (\(failure)); its records go on to it unrotated")
            }
        }
        try FileDescriptor.writeAll(record, to: descriptor)
        size += record.count
    }

    /// Renames the set one step older and opens a fresh `path`; nil when done, else what failed.
    private func rotate() -> String? {
        for (from, to) in rotation.renames(of: path) where rename(from, to) != 0 {
            // A set not yet full has gaps; only the current file must move.
            if errno == ENOENT, from != path { continue }
            return "renaming '\(from)' to '\(to)': \(SystemError.describe(errno))"
        }
        do {
            let (fresh, freshSize) = try Self.open(path)
            Glibc.close(descriptor)
            (descriptor, size) = (fresh, freshSize)
            return nil
        } catch {
            // The records go on to the renamed file.
            return error.message
        }
    }

    func close() { Glibc.close(descriptor) }
}
