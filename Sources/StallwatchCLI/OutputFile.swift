// Writing one whole output file: a regular file appears complete or not at all; devices, FIFOs and stdout are
// written directly.
import Glibc
import StallwatchCore
import StallwatchSystem

/// Writes an export (`report --output`, `--html`, `--export`) so that no reader ever sees half of it.
enum OutputFile {
    /// How a path is written.
    enum Method: Equatable {
        /// Standard output.
        case standardOutput
        /// A temporary file in the same directory, renamed over the path: the path is new or a regular file.
        case replace
        /// Opened and written in place: a device, a FIFO, a socket, or a symbolic link (never renamed over, so the
        /// link and what it points at stay as they are).
        case direct
    }

    /// How `path` would be written, from what is at it now.
    static func method(for path: String) -> Method {
        if path == WatchOptions.standardOutputPath { return .standardOutput }
        var status = stat()
        guard lstat(path, &status) == 0 else { return .replace }
        return status.st_mode & S_IFMT == S_IFREG ? .replace : .direct
    }

    /// Writes `bytes` to `path` (`-`: stdout) whole.
    static func write(_ bytes: [UInt8], to path: String) throws(StallwatchError) {
        func failed(_ reason: String) -> StallwatchError {
            StallwatchError(
                message: "cannot write '\(path)': \(reason)", exitCode: ExitCode.cannotCreateOutput)
        }
        switch method(for: path) {
        case .standardOutput:
            do {
                try FileDescriptor.writeAll(bytes, to: STDOUT_FILENO)
            } catch {
                // A reader that went away (`| head`) is not worth an error.
                if error.errno != EPIPE { throw failed(error.reason) }
            }
        case .direct:
            do {
                let descriptor = try Syscall.call("open") { open(path, O_WRONLY | O_TRUNC | O_CLOEXEC) }
                defer { close(descriptor) }
                try FileDescriptor.writeAll(bytes, to: descriptor)
            } catch {
                throw failed(error.reason)
            }
        case .replace:
            try replace(path, with: bytes, failed: failed)
        }
    }

    private static func replace(
        _ path: String, with bytes: [UInt8], failed: (String) -> StallwatchError
    ) throws(StallwatchError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array("\(directory).\(name).stallwatch-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw failed(SystemError.describe(errno)) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        do {
            defer { close(descriptor) }
            // mkstemp makes 0600; a report is as readable as any file the user creates (umask applies).
            let mask = umask(0)
            umask(mask)
            var existing = stat()
            let mode = stat(path, &existing) == 0 ? existing.st_mode & 0o7777 : 0o666 & ~mask
            _ = try Syscall.call("fchmod") { fchmod(descriptor, mode) }
            try FileDescriptor.writeAll(bytes, to: descriptor)
            _ = try Syscall.call("fsync") { fsync(descriptor) }
            _ = try Syscall.call("rename") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw failed(error.reason)
        }
    }
}
