// HelpText: argument-parser's page layout, what each page must explain, and the usage-error report.

import StallwatchCLI
import StallwatchCollector
import StallwatchCore
import Testing

@Suite struct HelpLayoutTests {
    @Test(arguments: HelpTopic.allCases)
    func linesFitEightyColumns(topic: HelpTopic) {
        for line in HelpText.text(for: topic).split(separator: "\n") {
            #expect(line.count <= 80, "too long: \(line)")
        }
    }

    @Test(arguments: HelpTopic.allCases)
    func sectionsInArgumentParserOrder(topic: HelpTopic) throws {
        let text = HelpText.text(for: topic)
        #expect(text.hasPrefix("OVERVIEW: "))
        #expect(text.hasSuffix("\n") && !text.hasSuffix("\n\n"))
        let usage = try #require(text.firstRange(of: "\n\nUSAGE: \(HelpText.usageLine(for: topic))\n\n"))
        let options = try #require(text.firstRange(of: "\nOPTIONS:\n"))
        #expect(usage.lowerBound < options.lowerBound)
        if let subcommands = text.firstRange(of: "\nSUBCOMMANDS:\n") {
            #expect(options.lowerBound < subcommands.lowerBound)
        }
    }

    @Test(arguments: HelpTopic.allCases)
    func optionDescriptionsStartAtColumnTwentySix(topic: HelpTopic) {
        let text = HelpText.text(for: topic)
        #expect(text.contains("\n  -h, --help              Show help information.\n"))
        #expect(text.contains("\n  --version               Show the version.\n"))
    }

    @Test(arguments: [HelpTopic.run, .demo])
    func watchOptionsAreListedWithDefaults(topic: HelpTopic) {
        let text = HelpText.text(for: topic)
        #expect(text.contains("\n  --threshold <duration>  "))
        #expect(text.contains("(default: 80ms)"))
        #expect(text.contains("\n  --count <n>             "))
        #expect(text.contains("(default: 3)"))
        #expect(text.contains("\n  --format <format>       "))
        #expect(text.contains("(values: text, json; default: text)"))
        #expect(text.contains("\n  --output <file>         "))
        #expect(text.contains("\n  --color <color>         "))
        #expect(text.contains("(values: auto, always, never;"))
    }

    @Test(arguments: HelpTopic.allCases)
    func everyAcceptedOptionIsDocumented(topic: HelpTopic) {
        let names: [String] =
            switch topic {
            case .root: ["--version", "--help"]
            case .run: ["--threshold", "--count", "--format", "--output", "--color", "--version", "--help"]
            case .demo:
                ["--scenario", "--threshold", "--count", "--format", "--output", "--color", "--version", "--help"]
            case .attach:
                [
                    "--mode", "--duration", "--threshold", "--count", "--max-samples", "--format", "--output",
                    "--color",
                    "--version", "--help",
                ]
            case .stack: ["--all-threads", "--format", "--version", "--help"]
            case .report: ["--format", "--output", "--color", "--html", "--export", "--version", "--help"]
            }
        let text = HelpText.text(for: topic)
        for name in names {
            #expect(text.contains("\n  \(name)") || text.contains(", \(name)"), "\(name) missing from \(topic) help")
        }
        if topic == .run {
            #expect(!text.contains("--scenario"), "run does not accept --scenario")
        }
    }
}

@Suite struct HelpContentTests {
    @Test func rootOverviewSubcommandsAndExitStatus() {
        let text = HelpText.text(for: .root)
        #expect(
            text.hasPrefix(
                """
                OVERVIEW: Finds main-run-loop stalls in Linux programs and shows the stack that
                caused them.

                USAGE: stallwatch <subcommand>
                """))
        #expect(text.contains("\nSUBCOMMANDS:\n  run "))
        #expect(text.contains("\n  demo "))
        #expect(text.contains("\n  help                    Show subcommand help information.\n"))
        #expect(text.contains("See 'stallwatch help <subcommand>' for detailed help."))
        #expect(text.contains("\nEXIT STATUS:\n"))
        for code in [
            ExitCode.usage, ExitCode.internalError, ExitCode.cannotCreateOutput, ExitCode.notExecutable,
            ExitCode.commandNotFound,
        ] {
            #expect(text.contains("\n  \(code) "), "exit status \(code) is not documented")
        }
        #expect(text.contains("128+N"))
    }

    @Test func exitCodeValues() {
        #expect(ExitCode.success == 0)
        #expect(ExitCode.usage == 64)
        #expect(ExitCode.internalError == 70)
        #expect(ExitCode.cannotCreateOutput == 73)
        #expect(ExitCode.notExecutable == 126)
        #expect(ExitCode.commandNotFound == 127)
        #expect(ExitCode.killedBySignal(9) == 137)
    }

    @Test func runExplainsStallsPipingAndExamples() {
        let text = HelpText.text(for: .run)
        let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("A stall is --count consecutive --threshold timeouts while the main run loop is busy"))
        #expect(flat.contains("after it wakes, before it handles sources, or inside an observer"))
        #expect(flat.contains("An idle loop, waiting for events, never counts."))
        #expect(flat.contains("Reports go to stdout, or to --output <file>."))
        #expect(
            flat.contains(
                "The workload's stdout and stderr pass through untouched, except when JSON reports go to stdout"))
        #expect(flat.contains("the workload's stdout goes to stallwatch's stderr"))
        #expect(text.contains("\n  stallwatch run --format json -- CMD | jq .\n"))
        #expect(text.contains("\nUSAGE: stallwatch run [<options>] [--] <command> ...\n"))
        #expect(text.contains("\nARGUMENTS:\n  <command> ...           "))
        #expect(text.contains("\nEXAMPLES:\n"))
        #expect(text.contains("\n  stallwatch run -- ./MyDaemon --port 8080\n"))
        #expect(text.contains("\n  stallwatch run --format json --output stalls.ndjson -- ./MyDaemon\n"))
    }

    @Test func runExamplesParse() {
        let text = HelpText.text(for: .run) + HelpText.text(for: .demo)
        let examples = text.split(separator: "\n").filter { $0.hasPrefix("  stallwatch ") && !$0.contains("|") }
        #expect(examples.count >= 5)
        for example in examples {
            let arguments = example.split(separator: " ").dropFirst().map(String.init)
            switch ArgumentParser.parse(arguments) {
            case .success(.run), .success(.demo): break
            case let other: Issue.record("example '\(example)' parses as \(other)")
            }
        }
    }

    @Test(arguments: DemoScenario.allCases)
    func demoListsEachScenarioWithItsSummary(scenario: DemoScenario) {
        let padded = scenario.rawValue + String(repeating: " ", count: 24 - scenario.rawValue.count)
        #expect(HelpText.text(for: .demo).contains("\n  \(padded)\(scenario.summary)\n"))
    }

    @Test func demoScenarioSummaries() {
        #expect(DemoScenario.cpu.summary == "CPU-bound work in a timer callback.")
        #expect(DemoScenario.sleep.summary == "Blocking usleep in a timer callback.")
        #expect(DemoScenario.mainQueue.summary == "CPU work in a DispatchQueue.main block.")
        #expect(DemoScenario.source.summary == "CPU work in a version-0 run-loop source.")
        #expect(DemoScenario.mutex.summary == "Main thread blocked on a lock another thread holds.")
        #expect(DemoScenario.vdso.summary == "Spinning on clock_gettime, in the vDSO.")
        #expect(DemoScenario.observer.summary == "CPU work inside a beforeWaiting observer.")
        #expect(DemoScenario.baseline.summary == "Short work only; no stall expected.")
    }

    @Test func demoUsageAndSections() {
        let text = HelpText.text(for: .demo)
        #expect(text.contains("\nUSAGE: stallwatch demo [<options>] [-- <demo-arguments> ...]\n"))
        #expect(text.contains("\n  --scenario <name>       "))
        #expect(text.contains("\nSCENARIOS:\n"))
    }

    @Test func usageLines() {
        #expect(HelpText.usageLine(for: .root) == "stallwatch <subcommand>")
        #expect(HelpText.usageLine(for: .run) == "stallwatch run [<options>] [--] <command> ...")
        #expect(HelpText.usageLine(for: .demo) == "stallwatch demo [<options>] [-- <demo-arguments> ...]")
    }
}

@Suite struct ErrorTextTests {
    @Test func subcommandErrorPointsAtSubcommandHelp() {
        let error = UsageError(message: "Missing expected argument '<command> ...'", topic: .run)
        #expect(
            HelpText.errorText(for: error) == """
                Error: Missing expected argument '<command> ...'
                Usage: stallwatch run [<options>] [--] <command> ...
                  See 'stallwatch run --help' for more information.

                """
        )
    }

    @Test func demoErrorPointsAtDemoHelp() {
        let text = HelpText.errorText(for: UsageError(message: "x", topic: .demo))
        #expect(
            text
                == "Error: x\nUsage: stallwatch demo [<options>] [-- <demo-arguments> ...]\n  See 'stallwatch demo --help' for more information.\n"
        )
    }

    @Test func rootErrorPointsAtRootHelp() {
        #expect(
            HelpText.errorText(for: UsageError(message: "Unknown option '--x'", topic: .root))
                == "Error: Unknown option '--x'\nUsage: stallwatch <subcommand>\n  See 'stallwatch --help' for more information.\n"
        )
    }

    @Test func parserErrorRendersEndToEnd() throws {
        let error = try #require(usageError(["run", "--treshold", "80ms", "./d"]))
        #expect(
            HelpText.errorText(for: error) == """
                Error: Unknown option '--treshold'. Did you mean '--threshold'?
                Usage: stallwatch run [<options>] [--] <command> ...
                  See 'stallwatch run --help' for more information.

                """
        )
    }
}
