// The help pages and the usage-error report, laid out as swift-argument-parser lays them out.
import StallwatchCollector
import StallwatchCore

/// Help and error text for the command line.
///
/// Every string ends with a newline and is meant to be written as it is: help to stdout,
/// errors to stderr.
public enum HelpText {
    /// The help page for `topic`, as `stallwatch [<subcommand>] --help` prints it.
    public static func text(for topic: HelpTopic) -> String {
        switch topic {
        case .root: rootHelp
        case .run: runHelp
        case .demo: demoHelp
        case .attach: attachHelp
        case .stack: stackHelp
        case .report: reportHelp
        }
    }

    /// The synopsis after `USAGE: ` and `Usage: `, such as `stallwatch run [<options>] [--] <command> ...`.
    public static func usageLine(for topic: HelpTopic) -> String {
        switch topic {
        case .root: "stallwatch <subcommand>"
        case .run: "stallwatch run [<options>] [--] <command> ..."
        case .demo: "stallwatch demo [<options>] [-- <demo-arguments> ...]"
        case .attach: "stallwatch attach [<options>] <pid>"
        case .stack: "stallwatch stack [--all-threads] [--format <format>] <pid>"
        case .report: "stallwatch report [<options>] <file> ..."
        }
    }

    /// What the entry point prints to stderr for a usage error, before exiting with
    /// ``ExitCode/usage``: the message, the usage line, and where to find help.
    public static func errorText(for error: UsageError) -> String {
        let helpCommand = error.topic == .root ? "stallwatch --help" : "stallwatch \(error.topic.rawValue) --help"
        return """
            Error: \(error.message)
            Usage: \(usageLine(for: error.topic))
              See '\(helpCommand)' for more information.

            """
    }

    // MARK: Pages

    private static let rootHelp = page(
        overview: "Finds main-run-loop stalls in Linux programs and shows the stack that caused them.",
        usage: usageLine(for: .root),
        sections: [
            optionsSection(for: .root),
            UsageLayout.section("SUBCOMMANDS", rows: ArgumentDefinitions.subcommands.map { ($0.name, $0.abstract) })
                + "\n  See 'stallwatch help <subcommand>' for detailed help.\n",
            UsageLayout.section(
                "EXIT STATUS",
                rows: [
                    ("0", "Success, or help or version shown."),
                    (
                        "<status>",
                        "run and demo: the workload's own exit status, or 128+N if signal N killed it; a failing"
                            + " workload's status wins over 80 below."
                    ),
                    ("\(ExitCode.usage)", "Usage error: a bad option or argument."),
                    (
                        "\(ExitCode.noSuchProcess)",
                        "attach, stack: no such process, or it exited before a capture; run: --baseline unreadable;"
                            + " report: an input cannot be read."
                    ),
                    ("\(ExitCode.noRecords)", "report: an input holds no stallwatch records."),
                    (
                        "\(ExitCode.runtimeMismatch)",
                        "The workload uses a different Swift runtime; attach --mode agent: no agent answers."
                    ),
                    ("\(ExitCode.internalError)", "Internal error."),
                    (
                        "\(ExitCode.cannotCreateOutput)",
                        "The --output or --junit file cannot be created or written, or --metrics cannot listen."
                    ),
                    (
                        "\(ExitCode.reportsLost)",
                        "Reports were lost: writing --output or --junit failed, or its reader fell behind."
                    ),
                    ("\(ExitCode.permissionDenied)", "attach, stack: not permitted to trace the process."),
                    (
                        "\(ExitCode.budgetBroken)",
                        "run and demo: the workload succeeded, but its stalls broke a budget."
                    ),
                    ("\(ExitCode.timedOut)", "run and demo: --timeout expired and the workload was stopped."),
                    ("\(ExitCode.notExecutable)", "The command was found but is not executable."),
                    ("\(ExitCode.commandNotFound)", "The command was not found."),
                ]
            ),
        ]
    )

    private static let runHelp = page(
        overview: ArgumentDefinitions.runAbstract,
        discussion: [
            """
            A stall is --count consecutive --threshold timeouts while the main run loop is busy: \
            after it wakes, before it handles sources, or inside an observer. An idle loop, \
            waiting for events, never counts.
            """,
            """
            Reports go to stdout, or to --output <file>. The workload's stdout and stderr pass through \
            untouched, except when JSON reports go to stdout: then the workload's stdout goes to \
            stallwatch's stderr, so that the report stream stays parseable:
              stallwatch run --format json -- CMD | jq .
            """,
        ],
        usage: usageLine(for: .run),
        sections: [
            UsageLayout.section(
                "ARGUMENTS",
                rows: [
                    (
                        "<command> ...",
                        """
                        The program to run, and its arguments. Everything from the first argument that \
                        is not an option belongs to the program, unchanged.
                        """
                    )
                ]
            ),
            optionsSection(for: .run),
            examplesSection([
                "stallwatch run -- ./MyDaemon --port 8080",
                "stallwatch run --threshold 50ms --count 2 ./MyDaemon",
                "stallwatch run --format json --output stalls.ndjson -- ./MyDaemon",
                "stallwatch run --metrics :9464 --output stalls.ndjson -- ./MyDaemon",
            ]),
        ]
    )

    private static let demoHelp = page(
        overview: ArgumentDefinitions.demoAbstract,
        discussion: [
            """
            Runs the stallwatch-demo workload under stallwatch, as `stallwatch run` would, to show \
            what a report looks like. The options are those of `stallwatch run`, plus --scenario.
            """
        ],
        usage: usageLine(for: .demo),
        sections: [
            UsageLayout.section(
                "ARGUMENTS",
                rows: [("<demo-arguments>", "Arguments for the demo workload, unchanged; put them after '--'.")]
            ),
            optionsSection(for: .demo),
            UsageLayout.section("SCENARIOS", rows: DemoScenario.allCases.map { ($0.rawValue, $0.summary) }),
            examplesSection([
                "stallwatch demo --scenario mutex",
                "stallwatch demo --scenario main-queue --format json",
                "stallwatch demo --scenario sleep -- --stalls 5 --duration 1s",
            ]),
        ]
    )

    private static let attachHelp = page(
        overview: ArgumentDefinitions.attachAbstract,
        discussion: [
            """
            With its agent: a process started with STALLWATCH_LISTEN=1 and the agent loaded \
            (LD_PRELOAD=libStallwatchAgent.so, or linked) listens on a private socket; attach \
            connects to it and reports exactly as run does.
            """,
            """
            Without one (external mode): the main thread is sampled from /proc every --threshold; \
            --count consecutive samples outside its event-loop wait (epoll_wait, poll, select) make \
            a stall, timed to within one sample. Works on any event-loop program, Swift or not.
            """,
            """
            --thread picks other threads (all, a name glob such as 'NIO-ELT-*', a tid), each \
            sampled the same way. A thread is judged only once seen waiting in its event loop, so a \
            main thread parked in sleep(), pthread_join or a futex is not reported as a stall.
            """,
            """
            Ctrl-C, SIGTERM or --duration detaches and prints the summary; the process keeps running \
            and is never left stopped.
            """,
        ],
        usage: usageLine(for: .attach),
        sections: [
            UsageLayout.section("ARGUMENTS", rows: [("<pid>", "The process to watch.")]),
            optionsSection(for: .attach),
            examplesSection([
                "stallwatch attach 4242",
                "stallwatch attach --duration 30s --format json 4242",
                "stallwatch attach --mode external --threshold 50ms 4242",
            ]),
        ]
    )

    private static let stackHelp = page(
        overview: ArgumentDefinitions.stackAbstract,
        discussion: [
            """
            Stops each thread for a fraction of a millisecond with ptrace, one at a time, and prints \
            its stack with demangled Swift names and file:line where the binary has debug info, with \
            the thread's name and scheduler state.
            """
        ],
        usage: usageLine(for: .stack),
        sections: [
            UsageLayout.section("ARGUMENTS", rows: [("<pid>", "The process whose stacks to print.")]),
            optionsSection(for: .stack),
            UsageLayout.section(
                "ENVIRONMENT",
                rows: [
                    (
                        "STALLWATCH_SYMBOLIZER",
                        "How frames are named. Unset: symbol tables and DWARF are read in process, with the Swift "
                            + "toolchain's llvm-symbolizer for DWARF that reader cannot decode. A path to an "
                            + "llvm-symbolizer: it reads all DWARF. Frames neither names keep the symbol table's name. "
                            + "Also for run and attach."
                    )
                ]),
            examplesSection([
                "stallwatch stack 4242",
                "stallwatch stack --all-threads --format json 4242",
            ]),
        ]
    )

    // MARK: Building blocks

    static func page(
        overview: String,
        discussion: [String] = [],
        usage: String,
        sections: [String]
    ) -> String {
        let head = ([UsageLayout.wrap("OVERVIEW: " + overview)] + discussion.map { UsageLayout.wrap($0) })
            .joined(separator: "\n\n")
        let usageLine = UsageLayout.wrap("USAGE: " + usage)
        return head + "\n\n" + usageLine + "\n\n" + sections.joined(separator: "\n")
    }

    static func optionsSection(for topic: HelpTopic) -> String {
        UsageLayout.section(
            "OPTIONS",
            rows: ArgumentDefinitions.options(for: topic).map { ($0.helpLabel, $0.abstract) }
        )
    }

    static func examplesSection(_ commands: [String]) -> String {
        "EXAMPLES:\n" + commands.map { "  \($0)\n" }.joined()
    }
}
