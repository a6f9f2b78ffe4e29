// The options each command accepts: one table read by both the parser and the help text, so the
// two cannot drift apart.
import StallwatchCollector
import StallwatchCore

/// One option as the parser matches it and the help text lists it.
struct ArgumentDefinition: Sendable {
    /// What the option sets.
    enum Key: Sendable {
        case threshold, count, maxSamples, maxFrames, format, output, color, scenario, mode, duration, allThreads,
            version, help
        case strategy, failOnStall, maxStall, maxStalls, maxTotal, maxP99, timeout, junit, baseline
        case fps, fpsMaxFrame, fpsPow, fpsDump
        case reportFormat, html, export, thread, source
        case rateLimit, rotate
        case metrics
    }

    let key: Key
    /// Every spelling; the short one first, as help lists them (`-h, --help`).
    let names: [String]
    /// The placeholder in `--threshold <duration>`; `nil` for flags.
    let valueName: String?
    /// The help text, including any `(default: ...)` note.
    let abstract: String
    /// Spellings that are accepted but not listed in help.
    var hiddenNames: [String] = []

    /// The spelling errors quote: the long name.
    var preferredName: String { names.last ?? "" }

    /// `--threshold <duration>`, as errors quote it.
    var synopsis: String {
        valueName.map { "\(preferredName) <\($0)>" } ?? preferredName
    }

    /// `-h, --help` or `--threshold <duration>`, as the help's option column shows it.
    var helpLabel: String {
        let joined = names.joined(separator: ", ")
        return valueName.map { "\(joined) <\($0)>" } ?? joined
    }

    func matches(_ name: String) -> Bool {
        names.contains(name) || hiddenNames.contains(name)
    }
}

enum ArgumentDefinitions {
    /// The options of `topic`, in the order help lists them.
    static func options(for topic: HelpTopic) -> [ArgumentDefinition] {
        switch topic {
        case .root: [version, help]
        case .run:
            watchOptions + [thread, source, strategy] + frameRateOptions + ciOptions + exportOptions + [version, help]
        case .demo:
            [scenario] + watchOptions + [thread, source, strategy] + frameRateOptions + ciOptions + exportOptions + [
                version, help,
            ]
        case .attach: [mode, duration] + watchOptions + [thread, source] + exportOptions + [version, help]
        case .stack: [allThreads, maxFrames, stackFormat, version, help]
        case .report: reportOptions + [version, help]
        }
    }

    /// The subcommands, in the order help lists them, with their one-line summaries.
    static let subcommands: [(name: String, abstract: String)] = [
        ("run", runAbstract),
        ("attach", attachAbstract),
        ("stack", stackAbstract),
        ("report", reportAbstract),
        ("demo", demoAbstract),
        ("help", "Show subcommand help information."),
    ]

    static let runAbstract = "Run a command and report its main-run-loop stalls."
    static let demoAbstract = "Run the demo workload, which stalls on purpose, and report its stalls."
    static let attachAbstract = "Watch a running process and report its stalls."
    static let stackAbstract = "Print a running process's stacks once, with names and source lines."

    static let help = ArgumentDefinition(
        key: .help,
        names: ["-h", "--help"],
        valueName: nil,
        abstract: "Show help information.",
        hiddenNames: ["-help"]
    )

    static let version = ArgumentDefinition(
        key: .version,
        names: ["--version"],
        valueName: nil,
        abstract: "Show the version."
    )

    static let scenario = ArgumentDefinition(
        key: .scenario,
        names: ["--scenario"],
        valueName: "name",
        abstract: "The stall to cause; see SCENARIOS. (default: cpu)"
    )

    static let mode = ArgumentDefinition(
        key: .mode,
        names: ["--mode"],
        valueName: "mode",
        abstract: "How to watch: through the process's listening agent (agent), from outside with /proc and"
            + " ptrace (external), or auto: the agent if one answers, else external. "
            + valuesNote(AttachMode.allCases.map(\.rawValue), default: AttachMode.auto.rawValue)
    )

    static let duration = ArgumentDefinition(
        key: .duration,
        names: ["--duration"],
        valueName: "duration",
        abstract: """
            Detach after this long, up to 1 hour; without it, watch until Ctrl-C, SIGTERM or the \
            process's exit.
            """
    )

    static let maxFrames = ArgumentDefinition(
        key: .maxFrames,
        names: ["--max-frames"],
        valueName: "n",
        abstract: """
            Frames to keep per stack, from \(WatchSettings.maxFramesRange.lowerBound) to \
            \(WatchSettings.maxFramesRange.upperBound); of a deeper stack the innermost three quarters and the \
            outermost quarter are kept, and the frames left out between them are said. \
            (default: \(WatchSettings().maxFrames))
            """
    )

    static let allThreads = ArgumentDefinition(
        key: .allThreads,
        names: ["--all-threads"],
        valueName: nil,
        abstract: "Show every thread, not only the main thread."
    )

    static let stackFormat = ArgumentDefinition(
        key: .format,
        names: ["--format"],
        valueName: "format",
        abstract: "The output format; json writes one object. "
            + valuesNote(OutputFormat.allCases.map(\.rawValue), default: OutputFormat.text.rawValue)
    )

    private static let defaults = WatchOptions()

    static let strategy = ArgumentDefinition(
        key: .strategy,
        names: ["--strategy"],
        valueName: "strategy",
        abstract: "How to watch: observe the run loop, ping the main queue, or auto: the run loop, and pings "
            + "for a program that has none (dispatchMain). "
            + valuesNote(WatchStrategy.allCases.map(\.rawValue), default: WatchStrategy.auto.rawValue)
    )

    static let thread = ArgumentDefinition(
        key: .thread,
        names: ["--thread"],
        valueName: "selector",
        abstract: "Which threads' event loops to watch, repeatable: main, all (every thread seen waiting in an"
            + " event loop, and every thread running Swift tasks), a name glob on the thread's name ('NIO-ELT-*';"
            + " Swift's executor threads match '*qos*'), or a tid. Threads that appear later are picked up; budgets"
            + " count the stalls of every watched thread. (default: main)"
    )

    static let source = ArgumentDefinition(
        key: .source,
        names: ["--source"],
        valueName: "source",
        abstract: "Where the loop transitions of threads watched from outside (--thread, attach without an agent) come"
            + " from: kernel (the kernel's trace of each thread's loop waits: exact, no false stall under load;"
            + " needs root or CAP_BPF and CAP_PERFMON), proc (/proc sampled every threshold), agent (only what the"
            + " agent watches), or auto: kernel where permitted, else proc. "
            + valuesNote(LoopSource.allCases.map(\.rawValue), default: LoopSource.auto.rawValue)
    )

    private static let frameRateDefaults = FrameRateMonitor.Configuration()

    /// `--fps` and the three Matrix parameters worth tuning, for `run` and `demo` (see docs/how-it-works.md).
    static let frameRateOptions: [ArgumentDefinition] = [
        ArgumentDefinition(
            key: .fps, names: ["--fps"], valueName: nil,
            abstract: "Also measure the frame rate: a 60 Hz tick on the main run loop; report each second's"
                + " effective FPS and runs of dropped frames."),
        ArgumentDefinition(
            key: .fpsMaxFrame, names: ["--fps-max-frame"], valueName: "duration",
            abstract: "With --fps (implied): frames longer than this drop time, from 17ms to 10s."
                + " (default: \(DurationParser.format(.nanoseconds(Int64(frameRateDefaults.maxFrameInterval)))))"),
        ArgumentDefinition(
            key: .fpsPow, names: ["--fps-pow"], valueName: "number",
            abstract: "With --fps (implied): how much more than linearly long frames weigh, from 1 to 10."
                + " (default: \(frameRateDefaults.powFactor))"),
        ArgumentDefinition(
            key: .fpsDump, names: ["--fps-dump"], valueName: "duration",
            abstract: "With --fps (implied): report a run of slow frames once they add up to this, when"
                + " the frames turn smooth again, or at once past 8 times this, from 50ms to 10s."
                + " (default: \(DurationParser.format(.nanoseconds(Int64(frameRateDefaults.maxDumpTimestamp)))))"),
    ]

    /// Budgets and CI plumbing for `run` and `demo` (see docs/ci.md).
    static let ciOptions: [ArgumentDefinition] = [
        ArgumentDefinition(
            key: .failOnStall, names: ["--fail-on-stall"], valueName: nil,
            abstract: "Fail (exit \(ExitCode.budgetBroken)) if there is any stall not in the baseline, or a deadlock."),
        ArgumentDefinition(
            key: .maxStall, names: ["--max-stall"], valueName: "duration",
            abstract: "Fail if any stall lasts longer than this."),
        ArgumentDefinition(
            key: .maxStalls, names: ["--max-stalls"], valueName: "n", abstract: "Fail if there are more stalls."),
        ArgumentDefinition(
            key: .maxTotal, names: ["--max-total"], valueName: "duration",
            abstract: "Fail if the stalls add up to more than this."),
        ArgumentDefinition(
            key: .maxP99, names: ["--max-p99"], valueName: "duration",
            abstract: "Fail if the 99th percentile of the run loop's busy periods is longer: many short "
                + "hiccups fail a run though none is a stall."),
        ArgumentDefinition(
            key: .timeout, names: ["--timeout"], valueName: "duration",
            abstract: "Stop the workload after this long (SIGTERM, then SIGKILL 5 s later) and exit "
                + "\(ExitCode.timedOut); a stall still going on is reported as unfinished, with its stack."),
        ArgumentDefinition(
            key: .junit, names: ["--junit"], valueName: "file",
            abstract: "Also write a JUnit XML report to <file>, for CI test reporters."),
        ArgumentDefinition(
            key: .baseline, names: ["--baseline"], valueName: "file",
            abstract: "An earlier --format json report: the budgets ignore stalls it already has."),
    ]

    static let watchOptions: [ArgumentDefinition] = [
        ArgumentDefinition(
            key: .threshold,
            names: ["--threshold"],
            valueName: "duration",
            abstract: """
                The watcher's timeout: a number with a unit (us, ms or s), from 1ms to 1 hour. \
                (default: \(DurationParser.format(defaults.threshold)))
                """
        ),
        ArgumentDefinition(
            key: .count,
            names: ["--count"],
            valueName: "n",
            abstract: """
                How many consecutive timeouts while the loop is busy make a stall, from \
                \(WatchSettings.countRange.lowerBound) to \(WatchSettings.countRange.upperBound). \
                (default: \(defaults.count))
                """
        ),
        ArgumentDefinition(
            key: .maxSamples,
            names: ["--max-samples"],
            valueName: "n",
            abstract: """
                Stacks to capture per stall: one when it is detected, then one per threshold \
                while it lasts, from \(WatchSettings.maxSamplesRange.lowerBound) to \
                \(WatchSettings.maxSamplesRange.upperBound). (default: \(defaults.maxSamples))
                """
        ),
        maxFrames,
        ArgumentDefinition(
            key: .format,
            names: ["--format"],
            valueName: "format",
            abstract: "The report format; json writes one object per line. "
                + valuesNote(OutputFormat.allCases.map(\.rawValue), default: defaults.format.rawValue)
        ),
        ArgumentDefinition(
            key: .output,
            names: ["--output"],
            valueName: "file",
            abstract: "Append reports to <file>, each flushed as written, instead of stdout; '-' means stdout."
        ),
        ArgumentDefinition(
            key: .color,
            names: ["--color"],
            valueName: "color",
            abstract: "Color text reports; auto colors only a terminal whose TERM is not dumb. "
                + valuesNote(ColorChoice.allCases.map(\.rawValue), default: defaults.color.rawValue)
        ),
        rateLimit,
        rotate,
        metrics,
    ]

    /// argument-parser's note for an option with a fixed set of values.
    private static func valuesNote(_ values: [String], default defaultValue: String) -> String {
        "(values: \(values.joined(separator: ", ")); default: \(defaultValue))"
    }
}
