// Writes the `--junit` report: checked for writability before the run, written whole after it.
import FoundationEssentials
import Glibc
import StallwatchCollector
import StallwatchCore
import StallwatchSystem

enum JUnitFile {
    /// Fails with the `--output` exit status if the file cannot be created or replaced.
    static func checkWritable(_ path: String) throws(StallwatchError) {
        let existed = FileManager.default.fileExists(atPath: path)
        do {
            close(try Syscall.call("open") { open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) })
        } catch {
            throw StallwatchError(
                message: "cannot create --junit file '\(path)': \(error.reason)", exitCode: ExitCode.cannotCreateOutput)
        }
        if !existed { unlink(path) }
    }

    /// Replaces the file's content atomically (a reader never sees half a document). False on failure.
    static func write(_ xml: String, to path: String) -> Bool {
        (try? xml.write(toFile: path, atomically: true, encoding: .utf8)) != nil
    }
}
