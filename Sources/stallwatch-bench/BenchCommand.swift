// The bench's command line: a pure parser from arguments to what to do, and the help text.

/// What one invocation of `stallwatch-bench` asks for.
enum BenchCommand {
    /// A throughput workload, run by the driver bare, under `stallwatch run`, or with an in-process watcher.
    case workload(Workload, WorkloadOptions)
    /// The capture target that times, from inside, how long its main thread is stopped (`stalls` spins of `seconds`).
    case gapTarget(seconds: Double, stalls: Int)
    /// The driver: runs every benchmark and prints the tables.
    case drive(DriverOptions)
    case help

    enum Workload: String {
        case tightLoop = "tight-loop"
        case tightLoopFoundation = "tight-loop-foundation"
        case realistic
        case tightLoopThread = "tight-loop-thread"
        case idleLoops = "idle-loops"
    }

    static let helpText = """
        OVERVIEW: stallwatch's benchmarks: watching overhead, detection, capture, stallwatch stack against
        eu-stack and gdb, and memory.

        USAGE: stallwatch-bench drive [--rounds N] [--seconds S] [SECTION ...]
               stallwatch-bench WORKLOAD [--seconds S | --iterations N] [--classic | --empty-observers]
               stallwatch-bench tight-loop --seconds S --windows W
               stallwatch-bench gap-target [--seconds S] [--stalls N]

        WORKLOAD is tight-loop, tight-loop-foundation, realistic, tight-loop-thread or idle-loops; each prints one
        line,
          stallwatch-bench: count=N elapsed_ns=N cpu_ns=N

        SUBCOMMANDS:
          drive         Run the benchmarks and print the tables (what Scripts/bench runs). SECTION is one of
                        overhead, instructions, loops, kernel, detection, capture, stack, memory, soak, report,
                        metrics; the default is all of them.
          tight-loop    Count iterations of a run loop whose version-0 source re-signals itself, run by one
                        CFRunLoopRunInMode call.
          tight-loop-foundation
                        The same, run by RunLoop.run(until:): every iteration also enters and exits the loop.
          tight-loop-thread
                        The tight loop on a thread of its own, named bench-loop, while the main thread waits.
          idle-loops    16 epoll loop threads named NIO-ELT-0-#0 to #15, at rest for S seconds.
          realistic     Count the callbacks of two 1 kHz timers and the blocks a background thread posts to the
                        main queue at 2 kHz, each doing about 15 µs of work.
          gap-target    Spin in a timer callout for S seconds (SIGUSR1 ends it early), then print every gap
                        in its own clock; with --stalls N, N such callouts 300 ms apart.

        OPTIONS:
          --rounds N    Alternating rounds of bare, watched, empty-observer and classic runs (default: 5).
          --seconds S   Length of each run (default: 2).
          --iterations N
                        A fixed amount of work instead: N iterations of a tight loop, N callbacks and blocks of
                        the realistic loop (for counting instructions, which a time limit would not keep fixed).
          --classic     Install the classic detector in-process: one observer for every activity that
                        signals a semaphore, and a watcher thread waiting on it with an 80 ms timeout.
          --empty-observers
                        Install observers that do nothing on the activities the agent observes: the cost
                        of CoreFoundation's observer dispatch alone.
          --windows W   tight-loop: run in windows of W seconds and print each one's line (start_ns, end_ns,
                        count, cpu_ns), so that parts of one run can be compared (the metrics section).
          -h, --help    Show help information.
        """

    /// Parses the arguments after the program name; `--help` anywhere wins.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchCommand {
        if arguments.isEmpty || arguments.contains(where: { $0 == "--help" || $0 == "-h" }) { return .help }
        var remaining = arguments.dropFirst()
        let subcommand = arguments[0]
        var seconds: Double?
        var rounds: Int?
        var inProcess: WorkloadOptions.InProcessWatcher?
        var iterations: UInt64?
        var window: Double?
        var sections: [DriverOptions.Section] = []
        var stalls = 1
        while let argument = remaining.popFirst() {
            switch argument {
            case "--seconds":
                guard let text = remaining.popFirst(), let value = Double(text), value > 0, value <= 600 else {
                    throw BenchUsageError("--seconds takes a number of seconds from 0 to 600")
                }
                seconds = value
            case "--rounds" where subcommand == "drive":
                guard let text = remaining.popFirst(), let value = Int(text), (1...100).contains(value) else {
                    throw BenchUsageError("--rounds takes a whole number from 1 to 100")
                }
                rounds = value
            case "--iterations" where Workload(rawValue: subcommand) != nil:
                guard let text = remaining.popFirst(), let value = UInt64(text), (1...100_000_000).contains(value)
                else {
                    throw BenchUsageError("--iterations takes a whole number from 1 to 100000000")
                }
                iterations = value
            case "--stalls" where subcommand == "gap-target":
                guard let text = remaining.popFirst(), let value = Int(text), (1...100).contains(value) else {
                    throw BenchUsageError("--stalls takes a whole number from 1 to 100")
                }
                stalls = value
            case "--windows" where subcommand == Workload.tightLoop.rawValue:
                guard let text = remaining.popFirst(), let value = Double(text), value >= 0.01, value <= 60 else {
                    throw BenchUsageError("--windows takes a number of seconds from 0.01 to 60")
                }
                window = value
            case "--classic" where Workload(rawValue: subcommand) != nil:
                inProcess = .classic
            case "--empty-observers" where Workload(rawValue: subcommand) != nil:
                inProcess = .emptyObservers
            case _ where subcommand == "drive" && !argument.hasPrefix("-"):
                guard let section = DriverOptions.Section(rawValue: argument) else {
                    throw BenchUsageError("unknown section '\(argument)'")
                }
                sections.append(section)
            default:
                throw BenchUsageError("unexpected argument '\(argument)' for '\(subcommand)'")
            }
        }
        if let workload = Workload(rawValue: subcommand) {
            return .workload(
                workload,
                WorkloadOptions(seconds: seconds ?? 2, iterations: iterations, inProcess: inProcess, window: window))
        }
        switch subcommand {
        case "gap-target":
            return .gapTarget(seconds: seconds ?? 3, stalls: stalls)
        case "drive":
            var options = DriverOptions()
            options.rounds = rounds ?? options.rounds
            options.seconds = seconds ?? options.seconds
            options.sections = sections.isEmpty ? DriverOptions.Section.allCases : sections
            return .drive(options)
        default:
            throw BenchUsageError("unknown subcommand '\(subcommand)'")
        }
    }
}

/// How a throughput workload runs.
struct WorkloadOptions {
    /// Something watching the loop from inside the workload, for comparison with stallwatch's agent.
    enum InProcessWatcher {
        case classic
        case emptyObservers
    }

    var seconds: Double
    /// A fixed amount of work instead of a time limit.
    var iterations: UInt64?
    var inProcess: InProcessWatcher?
    /// `--windows S` (tight loop): run in windows of S seconds, each one's throughput printed.
    var window: Double?
}

/// What the driver measures, and how long.
struct DriverOptions {
    enum Section: String, CaseIterable {
        case overhead, instructions, loops, kernel, detection, capture, stack, memory, soak, report
        case metrics
    }

    var rounds = 5
    var seconds = 2.0
    var sections = Section.allCases
}

/// A command-line mistake: one `stallwatch-bench: error: ...` line, exit status 64.
struct BenchUsageError: Error {
    let message: String

    init(_ message: String) { self.message = message }
}
