// What the command line asked stallwatch to do, and the exit statuses the entry point returns.
import StallwatchCollector
import StallwatchCore

/// One parsed command line: the single value the entry point dispatches on.
///
/// Produced by ``ArgumentParser/parse(_:)``; a usage error is a ``UsageError`` instead.
public enum Invocation: Equatable, Sendable {
    /// Print help for a topic on stdout and exit with ``ExitCode/success``.
    ///
    /// Comes from `-h`, `--help`, `help [SUBCOMMAND]`, or no arguments at all.
    case help(HelpTopic)
    /// Print the version on stdout and exit with ``ExitCode/success``.
    ///
    /// The version itself is `StallwatchCore.StallwatchVersion.string`, shared with the agent.
    case version
    /// `stallwatch run`: launch a command and report its stalls.
    case run(RunOptions)
    /// `stallwatch demo`: launch the demo workload and report its stalls.
    case demo(DemoOptions)
    /// `stallwatch attach`: watch a running process and report its stalls.
    case attach(AttachOptions)
    /// `stallwatch stack`: print a running process's stacks once.
    case stack(StackOptions)
    /// `stallwatch report`: merge NDJSON reports and write a summary, pictures or profiles.
    case report(ReportOptions)
    /// `stallwatch _capture-helper --fd N --pid P`: library mode's capture helper, started by an app's
    /// `StallMonitor` (hidden from help: nobody types it).
    case captureHelper(socket: Int32, appPid: Int32)
}

/// The help page to show, and the usage line a ``UsageError`` points at.
public enum HelpTopic: String, CaseIterable, Sendable {
    /// The top-level `stallwatch` command.
    case root
    /// `stallwatch run`.
    case run
    /// `stallwatch demo`.
    case demo
    /// `stallwatch attach`.
    case attach
    /// `stallwatch stack`.
    case stack
    /// `stallwatch report`.
    case report
}
