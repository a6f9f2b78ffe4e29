// `stallwatch stack`: a one-shot dump of a running process's stacks, rendered once.
import StallwatchCollector
import StallwatchCore
import StallwatchReport

/// Captures a process's stacks with the engine and prints them in the chosen format.
enum StackCommand {
    static func run(_ options: StackOptions, startedAt started: UInt64) throws(StallwatchError) {
        let stacks = try StackCapture.capture(
            pid: options.pid, allThreads: options.allThreads, maxFrames: options.maxFrames, startedAt: started)
        var reporter = ReportFormat.reporter(options.format, clock: .now(), colored: false)
        Terminal.writeOutput(reporter.render(stacks))
    }
}
