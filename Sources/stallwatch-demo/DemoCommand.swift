// The demo's command line: a pure parser from arguments to what to do, and the help text.

/// What one invocation of the demo asks for.
enum DemoCommand {
    case run(DemoOptions)
    case list
    case help

    static let helpText = """
        OVERVIEW: A workload whose main run loop stalls on purpose, for stallwatch to find.

        Runs on RunLoop.main, stalls it --stalls times in the chosen way, then exits 0 by itself.
        At the end of each stall it prints the ground truth to stderr:
          stallwatch-demo: stall scenario=NAME index=N start_ns=NS duration_ms=MS culprit=Type.method

        USAGE: stallwatch-demo [--scenario NAME] [--duration DUR] [--period DUR] [--stalls N] [--list]

        OPTIONS:
          --scenario NAME   How to stall the main run loop (default: cpu; see --list).
          --duration DUR    Length of each stall, e.g. 600ms or 0.6s (default: 600ms).
          --period DUR      Time from one stall's start to the next; must exceed --duration (default: 1500ms).
          --stalls N        How many stalls (default: 2).
          --forbid-ptrace   Make the process non-dumpable (PR_SET_DUMPABLE 0), as hardened programs do:
                            only root may ptrace it, so stallwatch falls back to in-process capture.
          --list            List the scenarios and their culprits.
          -h, --help        Show help information.
        """

    /// Parses the arguments after the program name; `--help` anywhere wins over everything else.
    ///
    /// Options take their value as the next argument or after `=` (`--stalls 3`, `--stalls=3`); a repeated
    /// option keeps its last value.
    static func parse(_ arguments: [String]) throws(DemoUsageError) -> DemoCommand {
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) { return .help }
        var options = DemoOptions()
        var listRequested = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let (name, inlineValue) = split(argument)
            func value() throws(DemoUsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw DemoUsageError("missing value for \(name)") }
                return next
            }
            switch name {
            case "--scenario":
                let text = try value()
                guard let scenario = Scenario(rawValue: text) else {
                    let names = Scenario.allCases.map(\.rawValue).joined(separator: ", ")
                    throw DemoUsageError("unknown scenario '\(text)' (expected one of: \(names))")
                }
                options.scenario = scenario
            case "--duration": options.stallDuration = try parseDuration(value(), for: name)
            case "--period": options.period = try parseDuration(value(), for: name)
            case "--stalls":
                let text = try value()
                guard let count = Int(text), count > 0 else {
                    throw DemoUsageError("invalid value '\(text)' for --stalls: expected a positive integer")
                }
                options.stallCount = count
            case "--list":
                guard inlineValue == nil else { throw DemoUsageError("--list takes no value") }
                listRequested = true
            case "--forbid-ptrace":
                guard inlineValue == nil else { throw DemoUsageError("--forbid-ptrace takes no value") }
                options.forbidPtrace = true
            case _ where name.hasPrefix("-"): throw DemoUsageError("unknown option '\(argument)'")
            default: throw DemoUsageError("unexpected argument '\(argument)'")
            }
        }
        if listRequested { return .list }
        guard options.period > options.stallDuration else {
            throw DemoUsageError(
                "--period (\(Int(options.period.milliseconds))ms) must exceed"
                    + " --duration (\(Int(options.stallDuration.milliseconds))ms)"
            )
        }
        return .run(options)
    }

    private static func split(_ argument: String) -> (name: String, value: String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// Parses `600ms` or `0.6s` into a whole, positive number of milliseconds of at most an hour.
    ///
    /// Whole milliseconds keep the banner's `duration_ms`/`period_ms` exact integers; the hour cap keeps
    /// `usleep` and the arithmetic far from overflow.
    private static func parseDuration(_ text: String, for option: String) throws(DemoUsageError) -> Duration {
        let invalid = DemoUsageError(
            "invalid duration '\(text)' for \(option): expected a positive whole number of milliseconds"
                + " with a unit, e.g. 600ms or 0.6s"
        )
        let unit: (number: Substring, millisecondPlaces: Int)? =
            text.hasSuffix("ms") ? (text.dropLast(2), 0) : text.hasSuffix("s") ? (text.dropLast(1), 3) : nil
        guard let (number, places) = unit else { throw invalid }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }), parts[0].count <= 7
        else { throw invalid }
        let fraction = parts.count == 2 ? Array(parts[1]) : []
        guard fraction.dropFirst(places).allSatisfy({ $0 == "0" }) else { throw invalid }
        let millisecondDigits = fraction.prefix(places) + Array(repeating: "0", count: max(0, places - fraction.count))
        let milliseconds = millisecondDigits.reduce(Int(parts[0])!) { $0 * 10 + $1.wholeNumberValue! }
        guard milliseconds > 0 else { throw DemoUsageError("\(option) must be greater than zero, got '\(text)'") }
        guard milliseconds <= 3_600_000 else { throw DemoUsageError("\(option) must be at most 1 hour, got '\(text)'") }
        return .milliseconds(milliseconds)
    }
}

/// How the demo runs: the scenario and its timetable.
struct DemoOptions: Sendable {
    var scenario: Scenario = .cpu
    var stallDuration: Duration = .milliseconds(600)
    var period: Duration = .milliseconds(1500)
    var stallCount = 2
    /// Refuse ptrace from anyone but root, like ssh-agent and other hardened programs.
    var forbidPtrace = false
}

/// A command-line mistake, reported as one `stallwatch-demo: error: ...` line and exit status 64.
struct DemoUsageError: Error {
    let message: String

    init(_ message: String) { self.message = message }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
