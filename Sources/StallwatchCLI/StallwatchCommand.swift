// The entry point's one call: parse, dispatch, and turn every outcome into an exit status.
import FoundationEssentials
import Glibc
import StallwatchCore

/// Runs one stallwatch command line and returns the process's exit status.
///
/// The only place that decides exit statuses; nothing below it calls `exit()`.
public enum StallwatchCommand {
    public static func main(arguments: [String]) -> Int32 {
        let started = monotonicNow()
        switch ArgumentParser.parse(arguments) {
        case .failure(let error):
            Terminal.writeError(HelpText.errorText(for: error))
            return ExitCode.usage
        case .success(.help(let topic)):
            Terminal.writeOutput(HelpText.text(for: topic))
            return ExitCode.success
        case .success(.version):
            Terminal.writeOutput(StallwatchCore.StallwatchVersion.string + "\n")
            return ExitCode.success
        case .success(.run(let options)):
            return run(options.command, watch: options.watch)
        case .success(.demo(let options)):
            return demo(options)
        case .success(.attach(let options)):
            return attach(options)
        case .success(.stack(let options)):
            return StackCommand.run(options, startedAt: started)
        }
    }

    static func attach(_ options: AttachOptions) -> Int32 {
        do {
            let session = try AttachSession(options: options)
            return session.run()
        } catch {
            Terminal.writeError("stallwatch: error: \(error.message)\n")
            return error.exitCode
        }
    }

    static func run(_ command: [String], watch: WatchOptions) -> Int32 {
        do {
            let session = try RunSession(command: command, options: watch)
            return session.run()
        } catch {
            Terminal.writeError("stallwatch: error: \(error.message)\n")
            return error.exitCode
        }
    }

    static func demo(_ options: DemoOptions) -> Int32 {
        guard let demo = Installation.demoExecutable() else {
            Terminal.writeError(
                "stallwatch: error: the demo workload 'stallwatch-demo' is not installed next to stallwatch;"
                    + " build it with 'swift build' (Scripts/demo does)\n")
            return ExitCode.internalError
        }
        var command = [demo]
        if let scenario = options.scenario { command += ["--scenario", scenario] }
        command += options.demoArguments
        return run(command, watch: options.watch)
    }
}

/// Writes to the tool's own stdout and stderr, unbuffered, ignoring a closed pipe.
enum Terminal {
    static func writeOutput(_ text: String) { FileDescriptorWriter.writeAll(text, to: STDOUT_FILENO) }
    static func writeError(_ text: String) { FileDescriptorWriter.writeAll(text, to: STDERR_FILENO) }
}

enum FileDescriptorWriter {
    /// Writes all of `text`; returns false on an error such as a closed pipe.
    @discardableResult
    static func writeAll(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        bytes.removeAll()
        return true
    }
}
