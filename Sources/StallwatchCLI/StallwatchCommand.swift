// The entry point's one call: parse, dispatch, and turn every outcome into an exit status.
import Glibc
import StallwatchCollector
import StallwatchCore

/// Runs one stallwatch command line and returns the process's exit status.
///
/// The only place that decides exit statuses and prints failures; nothing below it calls `exit()`.
public enum StallwatchCommand {
    public static func main(arguments: [String]) -> Int32 {
        let started = monotonicNow()
        switch ArgumentParser.parse(arguments) {
        case .failure(let error):
            Terminal.writeError(HelpText.errorText(for: error))
            return ExitCode.usage
        case .success(let invocation):
            do {
                try refuseSetUserID()
                return try run(invocation, startedAt: started)
            } catch {
                Diagnostics.error(error)
                return error.exitCode
            }
        }
    }

    /// stallwatch runs programs (workloads, its helpers, `llvm-symbolizer`) and reads files on its caller's behalf:
    /// installed set-user-ID or set-group-ID it would do so with privileges its caller lacks, so it refuses. Root
    /// through `sudo`, or `CAP_SYS_PTRACE`, is how to give it more.
    static func refuseSetUserID() throws(StallwatchError) {
        guard getuid() != geteuid() || getgid() != getegid() else { return }
        throw StallwatchError(
            message:
                "stallwatch is running set-user-ID or set-group-ID (uid \(getuid()), euid \(geteuid())), which it"
                + " refuses: remove the bit (chmod u-s,g-s) and run it with sudo instead",
            exitCode: ExitCode.permissionDenied)
    }

    static func run(_ invocation: Invocation, startedAt started: UInt64) throws(StallwatchError) -> Int32 {
        switch invocation {
        case .help(let topic):
            Terminal.writeOutput(HelpText.text(for: topic))
        case .version:
            Terminal.writeOutput(StallwatchVersion.string + "\n")
        case .run(let options):
            return try RunCommand.run(options.command, options: options.watch)
        case .demo(let options):
            guard let demo = Installation.demoExecutable() else {
                throw .internalError(
                    "the demo workload 'stallwatch-demo' is not installed next to stallwatch;"
                        + " build it with 'swift build' (Scripts/demo does)")
            }
            var command = [demo]
            if let scenario = options.scenario { command += ["--scenario", scenario] }
            return try RunCommand.run(command + options.demoArguments, options: options.watch)
        case .attach(let options):
            return try AttachCommand.run(options)
        case .stack(let options):
            try StackCommand.run(options, startedAt: started)
        case .report(let options):
            return try ReportCommand.run(options)
        case .captureHelper(let socket, let appPid):
            return CaptureHelper.serve(socket: socket, appPid: appPid)
        }
        return ExitCode.success
    }
}
