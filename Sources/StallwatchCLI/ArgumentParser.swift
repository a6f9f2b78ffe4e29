// Turns stallwatch's command-line arguments into an `Invocation`, following swift-argument-parser's
// conventions and wording. Pure: it never prints and never exits.
import StallwatchCollector
import StallwatchCore
import StallwatchExport

/// The command-line parser.
///
/// `stallwatch [--version] [-h|--help] <subcommand>`, where the subcommand is `run`, `demo`, `attach`,
/// `stack` or `help [<subcommand>]`. Options take their value as the next argument or after `=`; given twice,
/// the last one wins. `-h`/`--help` anywhere among a command's options asks for that command's help,
/// even next to mistakes.
public enum ArgumentParser {
    /// Parses a command line.
    ///
    /// - Parameter arguments: The arguments without the program name (`CommandLine.arguments.dropFirst()`).
    /// - Returns: What to do, or the usage error to print with ``HelpText/errorText(for:)``.
    public static func parse(_ arguments: [String]) -> Result<Invocation, UsageError> {
        do throws(UsageError) {
            return .success(try parseRoot(arguments[...]))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Commands

    private static func parseRoot(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        if arguments.first == CaptureHelperRole.subcommand { return try parseCaptureHelper(arguments.dropFirst()) }
        if let request = builtInRequest(in: arguments, topic: .root) { return request }
        let scan = try scanOptions(arguments, topic: .root)
        guard let subcommand = scan.operands.first else { return .help(.root) }
        let rest = scan.operands.dropFirst()
        switch subcommand {
        case "run": return try parseRun(rest)
        case "demo": return try parseDemo(rest)
        case "attach": return try parseAttach(rest)
        case "stack": return try parseStack(rest)
        case "report": return try parseReport(rest)
        case "help": return try parseHelp(rest)
        default: throw unknownSubcommand(subcommand, suggestRun: true)
        }
    }

    /// `--fd N --pid P`, exactly as the agent writes them (``CaptureHelperRole/arguments(appPid:)``).
    private static func parseCaptureHelper(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        let words = Array(arguments)
        guard words.count == 4, words[0] == "--fd", words[2] == "--pid", let socket = Int32(words[1]),
            let pid = Int32(words[3]), socket >= 0, pid > 0
        else { throw UsageError(message: "\(CaptureHelperRole.subcommand) is started by StallMonitor", topic: .root) }
        return .captureHelper(socket: socket, appPid: pid)
    }

    private static func parseRun(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        if let request = builtInRequest(in: arguments, topic: .run) { return request }
        let scan = try scanOptions(arguments, topic: .run)
        var parsed = ParsedOptions()
        try apply(scan.values, to: &parsed, topic: .run)
        try checkRotation(parsed.watch, topic: .run)
        guard !scan.operands.isEmpty else {
            throw UsageError(message: "Missing expected argument '<command> ...'", topic: .run)
        }
        return .run(RunOptions(watch: parsed.watch, command: Array(scan.operands)))
    }

    private static func parseDemo(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        if let request = builtInRequest(in: arguments, topic: .demo) { return request }
        let scan = try scanOptions(arguments, topic: .demo)
        var parsed = ParsedOptions()
        try apply(scan.values, to: &parsed, topic: .demo)
        try checkRotation(parsed.watch, topic: .demo)
        // A scenario that stalls other threads than the main one watches them unless --thread says otherwise.
        if !parsed.threadsGiven, let selector = parsed.scenario.flatMap(DemoScenario.init)?.threadSelector {
            parsed.watch.settings.threads = [.name(selector)]
        }
        var options = DemoOptions(watch: parsed.watch, scenario: parsed.scenario)
        if !scan.afterTerminator, let stray = scan.operands.first {
            let hint =
                DemoScenario(rawValue: stray) != nil
                ? "Did you mean '--scenario \(stray)'?"
                : "Put arguments for the demo workload after '--'."
            throw UsageError(message: "Unexpected argument '\(stray)'. \(hint)", topic: .demo)
        }
        options.demoArguments = Array(scan.operands)
        return .demo(options)
    }

    private static func parseAttach(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        if let request = builtInRequestAnywhere(in: arguments, topic: .attach) { return request }
        let (parsed, pid) = try parseOptionsAndPid(arguments, topic: .attach)
        return .attach(AttachOptions(watch: parsed.watch, pid: pid, mode: parsed.mode, duration: parsed.duration))
    }

    private static func parseStack(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        if let request = builtInRequestAnywhere(in: arguments, topic: .stack) { return request }
        let (parsed, pid) = try parseOptionsAndPid(arguments, topic: .stack)
        return .stack(
            StackOptions(
                pid: pid, allThreads: parsed.allThreads, format: parsed.watch.format,
                maxFrames: parsed.watch.settings.maxFrames))
    }

    /// `[<options>] <pid> [<options>]`: the one operand of `attach` and `stack`, with options on either side of it
    /// (a pid never starts with `-`, so `stallwatch stack 42 --all-threads` reads as it looks).
    private static func parseOptionsAndPid(
        _ arguments: ArraySlice<String>, topic: HelpTopic
    ) throws(UsageError) -> (ParsedOptions, Int32) {
        let scan = try scanOptions(arguments, topic: topic)
        var parsed = ParsedOptions()
        try apply(scan.values, to: &parsed, topic: topic)
        guard let operand = scan.operands.first else {
            throw UsageError(message: "Missing expected argument '<pid>'", topic: topic)
        }
        var rest = scan.operands.dropFirst()
        if !scan.afterTerminator, let next = rest.first, next == "--" || isOption(next) {
            let trailing = try scanOptions(rest, topic: topic)
            try apply(trailing.values, to: &parsed, topic: topic)
            rest = trailing.operands
        }
        guard let pid = Int32(operand), pid > 0 else {
            throw UsageError(
                message: "The value '\(operand)' is invalid for '<pid>': expected a process id, a whole number above 0",
                topic: topic)
        }
        if let stray = rest.first {
            throw UsageError(message: "Unexpected argument '\(stray)'", topic: topic)
        }
        try checkRotation(parsed.watch, topic: topic)
        return (parsed, pid)
    }

    /// `help [<subcommand>]`; like argument-parser's, it ignores `-h`/`--help` among its arguments.
    private static func parseHelp(_ arguments: ArraySlice<String>) throws(UsageError) -> Invocation {
        var names: [String] = []
        for argument in arguments where !ArgumentDefinitions.help.matches(argument) && argument != "--" {
            guard !isOption(argument) else {
                throw unknownOption(split(argument).name, among: [ArgumentDefinitions.help], topic: .root)
            }
            names.append(argument)
        }
        guard let name = names.first else { return .help(.root) }
        guard names.count == 1 else {
            throw UsageError(message: "Unexpected argument '\(names[1])'", topic: .root)
        }
        switch name {
        case "run": return .help(.run)
        case "demo": return .help(.demo)
        case "attach": return .help(.attach)
        case "stack": return .help(.stack)
        case "report": return .help(.report)
        case "help": return .help(.root)
        default: throw unknownSubcommand(name, suggestRun: false)
        }
    }

    // MARK: Options

    /// What ``scanOptions(_:topic:)`` found: option values in command-line order, then the operands.
    struct OptionScan {
        var values: [(definition: ArgumentDefinition, value: String)] = []
        /// The arguments after the options: from the first non-option, or after `--`.
        var operands: ArraySlice<String> = []
        /// Whether the operands follow an explicit `--`.
        var afterTerminator = false
    }

    /// Finds `-h`/`--help` or `--version` among the options before the operands, wherever they are,
    /// so that a request for help wins over any mistake next to it.
    static func builtInRequest(in arguments: ArraySlice<String>, topic: HelpTopic) -> Invocation? {
        let definitions = ArgumentDefinitions.options(for: topic)
        var wantsVersion = false
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index] != "--", isOption(arguments[index]) {
            let definition = definitions.first { $0.matches(arguments[index]) }
            index += 1
            switch definition?.key {
            case .help?:
                return .help(topic)
            case .version?:
                wantsVersion = true
            default:
                // Step over the option's value: it would otherwise look like the first operand and end the scan.
                if definition?.valueName != nil, index < arguments.endIndex, isValue(arguments[index]) {
                    index += 1
                }
            }
        }
        return wantsVersion ? .version : nil
    }

    /// ``builtInRequest(in:topic:)`` for `attach` and `stack`, whose options may also follow the pid: a `-h` or
    /// `--version` anywhere before `--` counts (no value of theirs can start with `-`).
    private static func builtInRequestAnywhere(in arguments: ArraySlice<String>, topic: HelpTopic) -> Invocation? {
        let options = arguments.prefix { $0 != "--" }
        if options.contains(where: ArgumentDefinitions.help.matches) { return .help(topic) }
        if options.contains(where: ArgumentDefinitions.version.matches) { return .version }
        return nil
    }

    /// Reads the options at the front of `arguments` and stops at `--` or the first non-option.
    /// `-` alone is an operand for `report` (stdin), an unknown option elsewhere.
    static func scanOptions(_ arguments: ArraySlice<String>, topic: HelpTopic) throws(UsageError) -> OptionScan {
        let definitions = ArgumentDefinitions.options(for: topic)
        var scan = OptionScan()
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" {
                scan.operands = arguments[(index + 1)...]
                scan.afterTerminator = true
                return scan
            }
            guard isOption(argument), !(topic == .report && argument == "-") else { break }
            index += 1
            let (name, inlineValue) = split(argument)
            guard let definition = definitions.first(where: { $0.matches(name) }) else {
                throw unknownOption(name, among: definitions, topic: topic)
            }
            guard definition.valueName != nil else {
                if let inlineValue {
                    throw UsageError(
                        message: "The option '\(name)' does not take any value, but '\(inlineValue)' was specified.",
                        topic: topic
                    )
                }
                // --help and --version: builtInRequest has already acted on them. Other flags are set by apply.
                if definition.key != .help, definition.key != .version { scan.values.append((definition, "")) }
                continue
            }
            if let inlineValue {
                scan.values.append((definition, inlineValue))
            } else if index < arguments.endIndex, isValue(arguments[index]) {
                scan.values.append((definition, arguments[index]))
                index += 1
            } else {
                throw UsageError(message: "Missing value for '\(definition.synopsis)'", topic: topic)
            }
        }
        scan.operands = arguments[index...]
        return scan
    }

    /// Every option value any command takes, before the command picks the ones it has.
    struct ParsedOptions {
        var watch = WatchOptions()
        var scenario: String?
        var mode = AttachMode.auto
        var duration: Duration?
        var allThreads = false
        var reportFormat: ExportFormat?
        /// Whether a `--thread` was given: the first replaces the default.
        var threadsGiven = false
    }

    // MARK: Errors

    private static func unknownOption(
        _ name: String,
        among definitions: [ArgumentDefinition],
        topic: HelpTopic
    ) -> UsageError {
        var message = "Unknown option '\(name)'"
        // argument-parser suggests only long names, and never for a single-letter option.
        let longNames = definitions.flatMap(\.names).filter { $0.hasPrefix("--") }
        if name.count > 2, let suggestion = ArgumentSuggestions.closest(to: name, among: longNames) {
            message += ". Did you mean '\(suggestion)'?"
        } else if topic == .root, ArgumentDefinitions.watchOptions.contains(where: { $0.matches(name) }) {
            message += ". Options of 'run' and 'demo' go after the subcommand."
        }
        return UsageError(message: message, topic: topic)
    }

    private static func unknownSubcommand(_ name: String, suggestRun: Bool) -> UsageError {
        var message = "Unknown subcommand '\(name)'"
        let names = ArgumentDefinitions.subcommands.map(\.name)
        if let suggestion = ArgumentSuggestions.closest(to: name, among: names) {
            message += ". Did you mean '\(suggestion)'?"
        } else if suggestRun, !name.isEmpty, name.allSatisfy(\.isNumber) {
            message += ". To watch a running process, write 'stallwatch attach \(name)'."
        } else if suggestRun {
            message += ". To watch a program, write 'stallwatch run \(name)'."
        }
        return UsageError(message: message, topic: .root)
    }

    /// argument-parser's list of valid values for an option that takes one of a fixed set.
    static func choices(_ values: [String]) -> String {
        let quoted = values.map { "'\($0)'" }
        switch quoted.count {
        case ..<3:
            return ". Please provide one of \(quoted.joined(separator: " and "))."
        case ..<6:
            return ". Please provide one of \(quoted.dropLast().joined(separator: ", ")) or \(quoted.last ?? "")."
        default:
            return ". Please provide one of the following:\n" + values.map { "  - \($0)" }.joined(separator: "\n")
        }
    }

    // MARK: Tokens

    /// Whether an argument in option position is an option (anything starting with `-`).
    static func isOption(_ argument: String) -> Bool {
        argument.hasPrefix("-")
    }

    /// Whether the argument after a value-taking option can be its value: not another option,
    /// except `-` on its own, which `--output -` uses for stdout, and a negative number (`--threshold -5ms`), which
    /// is a value the option's own check then refuses with a reason.
    private static func isValue(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument != "-" else { return true }
        return argument.dropFirst().first.map { $0.isNumber || $0 == "." } ?? false
    }

    /// Splits `--name=value` at the first `=`; other arguments have no inline value.
    private static func split(_ argument: String) -> (name: String, value: String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
            return (argument, nil)
        }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
