// Writing a whole file the user named, without replacing what the name points at: a device stays a device, a
// symlink stays a symlink, and a regular file is replaced whole or not at all.
import CStallwatchSystem
import Glibc

/// Writes a finished document (a JUnit report, an export) to a path the user gave.
///
/// stallwatch often runs as root: a rename over `/dev/null` would replace the device with a regular file for the
/// whole system. So only a regular file, or a name that does not exist yet, is written to a temporary file in its
/// own directory and renamed over (a reader never sees half a document); a symlink is followed and its target is
/// what this rule applies to; anything else (a device, a FIFO, a socket) is opened and written directly; `-` is
/// standard output.
public enum OutputFile {
    /// How a path is written.
    public enum Method: Equatable, Sendable {
        case standardOutput
        /// A temporary file in `directory`, renamed to `path`; `mode` keeps an existing file's permissions.
        case replace(path: String, directory: String, mode: mode_t?)
        /// Opened and written in place.
        case direct(path: String)
    }

    /// What `path` names now, and so how it is written.
    public static func method(for path: String) -> Method {
        if path == "-" { return .standardOutput }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            // Nothing there yet (or unreachable: the write will say why): a new regular file.
            return .replace(path: path, directory: directory(of: path), mode: nil)
        }
        if status.st_mode & S_IFMT == S_IFLNK {
            // The target is what is written; a dangling link is written through (which creates its target).
            guard let target = realpath(path, nil) else { return .direct(path: path) }
            defer { free(target) }
            let resolved = String(cString: target)
            return resolved == path ? .direct(path: path) : method(for: resolved)
        }
        if status.st_mode & S_IFMT == S_IFREG {
            return .replace(path: path, directory: directory(of: path), mode: status.st_mode & 0o7777)
        }
        return .direct(path: path)
    }

    /// Writes `bytes` as the whole content of `path`, by ``method(for:)``.
    ///
    /// - Parameter deadline: how long a direct write may wait for a slow reader (a FIFO), milliseconds.
    public static func write(_ bytes: [UInt8], to path: String, deadline milliseconds: Int32 = 5000)
        throws(SystemError)
    {
        switch method(for: path) {
        case .standardOutput:
            try FileDescriptor.writeAll(bytes, to: STDOUT_FILENO)
        case .direct(let path):
            // Non-blocking, so that a FIFO without a reader is an error (ENXIO) rather than a hang; O_CREAT for the
            // target of a dangling symlink (it opens a device or FIFO as it is).
            let descriptor = try Syscall.call("open") { open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0o644) }
            defer { close(descriptor) }
            try FileDescriptor.writeAll(bytes, to: descriptor, waitingUpTo: milliseconds)
        case .replace(let path, let directory, let mode):
            let (descriptor, temporary) = try temporaryFile(in: directory)
            // Ctrl-C or a SIGTERM while the file is written must not leave it beside the output.
            _ = sw_temporary_file_remember(temporary)
            defer { sw_temporary_file_forget() }
            do throws(SystemError) {
                try FileDescriptor.writeAll(bytes, to: descriptor)
                try Syscall.call("fchmod") { fchmod(descriptor, mode ?? 0o644) }
                try Syscall.call("fsync") { fsync(descriptor) }
                close(descriptor)
                try Syscall.call("rename") { rename(temporary, path) }
            } catch {
                close(descriptor)
                unlink(temporary)
                throw error
            }
        }
    }

    /// Whether `path` could be written at the end of a run, by ``method(for:)``: its directory takes a new file, or
    /// the device it names opens. A FIFO with no reader yet, or a dangling symlink whose target does not exist yet,
    /// passes: the reader, and the target, may come later.
    public static func checkWritable(_ path: String) throws(SystemError) {
        switch method(for: path) {
        case .standardOutput:
            return
        case .direct(let path):
            var status = stat()
            if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK, stat(path, &status) != 0 { return }
            do {
                close(try Syscall.call("open") { open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) })
            } catch  where error.errno == ENXIO {
                return
            }
        case .replace(_, let directory, _):
            let (descriptor, temporary) = try temporaryFile(in: directory)
            close(descriptor)
            unlink(temporary)
        }
    }

    /// A new, empty file of ours in `directory`, and its path.
    static func temporaryFile(in directory: String) throws(SystemError) -> (descriptor: Int32, path: String) {
        var template = Array((directory + "/.stallwatch-XXXXXX").utf8CString)
        let descriptor = try Syscall.call("mkstemp") { mkstemp(&template) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (descriptor, path)
    }

    /// The directory holding `path` (`.` for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Whether two paths name the same file (the same device and inode), when both exist.
    public static func sameFile(_ first: String, _ second: String) -> Bool {
        var a = stat()
        var b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }
}
