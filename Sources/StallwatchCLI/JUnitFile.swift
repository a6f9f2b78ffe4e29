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
        do {
            try OutputFile.checkWritable(path)
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
