// Writes the `--junit` report: checked for writability before the run, written whole after it.
import FoundationEssentials
import Glibc
import StallwatchCollector
import StallwatchCore
import StallwatchSystem

/// The JUnit file, written by ``OutputFile``'s rule: a regular file replaced whole, a device or FIFO written in place,
/// `-` standard output.
enum JUnitFile {
    /// Fails with the `--output` exit status if the file could not be written at the end: its directory does not
    /// take a new file, or the device it names cannot be opened.
    static func checkWritable(_ path: String) throws(StallwatchError) {
        do throws(SystemError) {
            switch OutputFile.method(for: path) {
            case .standardOutput:
                return
            case .direct(let path):
                // A FIFO whose reader comes later is fine; anything that cannot be opened at all is not. A dangling
                // symlink's target is not created yet: only whether it could be.
                var status = stat()
                if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK, stat(path, &status) != 0 {
                    return
                }
                let descriptor = try Syscall.call("open") { open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) }
                close(descriptor)
            case .replace(_, let directory, _):
                var template = Array((directory + "/.stallwatch-XXXXXX").utf8CString)
                let descriptor = try Syscall.call("mkstemp") { mkstemp(&template) }
                close(descriptor)
                unlink(String(cString: template))
            }
        } catch  where error.errno == ENXIO {
            return
        } catch {
            throw StallwatchError(
                message: "cannot create --junit file '\(path)': \(error.reason)", exitCode: ExitCode.cannotCreateOutput)
        }
    }

    /// Writes the whole document; the failure's reason otherwise.
    static func write(_ xml: String, to path: String) -> String? {
        do {
            try OutputFile.write(Array(xml.utf8), to: path)
            return nil
        } catch {
            return error.reason
        }
    }
}
