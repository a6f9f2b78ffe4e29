// stallwatch's own messages on stderr: the one place errors, warnings and notes are worded and written.
import Glibc
import StallwatchCore
import StallwatchReport
import StallwatchSystem

/// Writes to the tool's own stdout and stderr, unbuffered, ignoring a closed pipe.
enum Terminal {
    static func writeOutput(_ text: String) { FileDescriptor.writeAll(text, to: STDOUT_FILENO) }
    static func writeError(_ text: String) { FileDescriptor.writeAll(text, to: STDERR_FILENO) }
}

/// stallwatch's messages to the person running it, each one line on stderr.
enum Diagnostics {
    /// A failure that ends the command: what is wrong and what to do.
    static func error(_ error: StallwatchError) {
        Terminal.writeError("stallwatch: error: \(TerminalText.escaped(error.message))\n")
    }

    /// Something the user should know; the command goes on.
    static func warning(_ text: String) {
        Terminal.writeError("stallwatch: warning: \(TerminalText.escaped(text))\n")
    }

    /// A plain status line ("watching pid 42 ...", "stall budget broken: ...").
    static func note(_ text: String) {
        Terminal.writeError("stallwatch: \(TerminalText.escaped(text))\n")
    }
}
