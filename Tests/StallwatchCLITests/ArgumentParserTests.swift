// ArgumentParser on command lines it accepts: subcommands, options, operands, help and version.

import StallwatchCLI
import StallwatchCollector
import StallwatchCore
import Testing

/// Parses and returns the invocation, recording an issue if the command line was rejected.
func invocation(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> Invocation? {
    switch ArgumentParser.parse(arguments) {
    case .success(let invocation):
        return invocation
    case .failure(let error):
        Issue.record("unexpected usage error: \(error.message)", sourceLocation: sourceLocation)
        return nil
    }
}

@Suite struct RootCommandTests {
    @Test func noArgumentsShowsRootHelp() {
        #expect(invocation([]) == .help(.root))
    }

    @Test(arguments: [["-h"], ["--help"], ["-help"], ["help"], ["help", "help"], ["help", "--help"]])
    func helpRequestsShowRootHelp(arguments: [String]) {
        #expect(invocation(arguments) == .help(.root))
    }

    @Test func versionFlag() {
        #expect(invocation(["--version"]) == .version)
    }

    @Test func helpWinsOverVersion() {
        #expect(invocation(["--version", "--help"]) == .help(.root))
    }

    @Test(arguments: [
        (["help", "run"], HelpTopic.run),
        (["help", "demo"], .demo),
        (["run", "--help"], .run),
        (["run", "-h"], .run),
        (["demo", "--help"], .demo),
        (["demo", "-h"], .demo),
        (["help", "run", "--help"], .run),
    ])
    func subcommandHelp(arguments: [String], topic: HelpTopic) {
        #expect(invocation(arguments) == .help(topic))
    }

    @Test func versionIsAcceptedAmongSubcommandOptions() {
        #expect(invocation(["run", "--version"]) == .version)
        #expect(invocation(["demo", "--count", "2", "--version"]) == .version)
    }
}

@Suite struct RunCommandTests {
    @Test func defaults() {
        let expected = RunOptions(watch: WatchOptions(), command: ["./MyDaemon"])
        #expect(invocation(["run", "./MyDaemon"]) == .run(expected))
        #expect(expected.watch.threshold == .milliseconds(80))
        #expect(expected.watch.count == 3)
        #expect(expected.watch.format == .text)
        #expect(expected.watch.output == nil)
        #expect(expected.watch.color == .auto)
    }

    @Test func everythingAfterTheCommandBelongsToIt() {
        let arguments = ["run", "./MyDaemon", "--port", "8080", "--threshold", "5", "-h", "--help", "--", "x"]
        #expect(invocation(arguments) == .run(RunOptions(command: Array(arguments.dropFirst()))))
    }

    @Test func doubleDashIsOptionalAndNotPartOfTheCommand() {
        let withDash = invocation(["run", "--", "./MyDaemon", "--port", "8080"])
        let withoutDash = invocation(["run", "./MyDaemon", "--port", "8080"])
        #expect(withDash == .run(RunOptions(command: ["./MyDaemon", "--port", "8080"])))
        #expect(withDash == withoutDash)
    }

    @Test func doubleDashLetsTheCommandStartWithADash() {
        #expect(invocation(["run", "--", "-weird", "--", "a"]) == .run(RunOptions(command: ["-weird", "--", "a"])))
    }

    @Test func helpAfterTheCommandGoesToTheCommand() {
        #expect(invocation(["run", "ls", "--help"]) == .run(RunOptions(command: ["ls", "--help"])))
        #expect(invocation(["run", "--", "ls", "-h"]) == .run(RunOptions(command: ["ls", "-h"])))
    }

    @Test func allOptionsWithSeparateValues() {
        let arguments = [
            "run", "--threshold", "50ms", "--count", "5", "--format", "json", "--output", "stalls.ndjson",
            "--color", "never", "--", "./d", "-x",
        ]
        let watch = WatchOptions(
            threshold: .milliseconds(50), count: 5, format: .json, output: "stalls.ndjson", color: .never
        )
        #expect(invocation(arguments) == .run(RunOptions(watch: watch, command: ["./d", "-x"])))
    }

    @Test func allOptionsWithEqualsSyntax() {
        let arguments = [
            "run", "--threshold=0.25s", "--count=100", "--format=json", "--output=out.json", "--color=always", "./d",
        ]
        let watch = WatchOptions(
            threshold: .milliseconds(250), count: 100, format: .json, output: "out.json", color: .always
        )
        #expect(invocation(arguments) == .run(RunOptions(watch: watch, command: ["./d"])))
    }

    @Test func equalsValueKeepsLaterEqualsSigns() {
        let parsed = invocation(["run", "--output=a=b.json", "./d"])
        #expect(parsed == .run(RunOptions(watch: WatchOptions(output: "a=b.json"), command: ["./d"])))
    }

    @Test func lastRepeatedOptionWins() {
        let parsed = invocation(["run", "--count", "2", "--count=7", "--format", "json", "--format", "text", "./d"])
        #expect(parsed == .run(RunOptions(watch: WatchOptions(count: 7, format: .text), command: ["./d"])))
    }

    @Test func singleDashOutputMeansStandardOutput() throws {
        let parsed = invocation(["run", "--output", "-", "--format", "json", "./d"])
        guard case .run(let options)? = parsed else {
            Issue.record("expected run, got \(String(describing: parsed))")
            return
        }
        #expect(options.watch.output == "-")
        #expect(options.watch.reportsGoToStandardOutput)
        #expect(options.watch.redirectsWorkloadStandardOutput)
    }

    @Test func thresholdBoundsAreInclusive() {
        #expect(
            invocation(["run", "--threshold", "1ms", "x"])
                == .run(RunOptions(watch: WatchOptions(threshold: .milliseconds(1)), command: ["x"])))
        #expect(
            invocation(["run", "--threshold", "3600s", "x"])
                == .run(RunOptions(watch: WatchOptions(threshold: .seconds(3600)), command: ["x"])))
        #expect(
            invocation(["run", "--count", "1", "x"]) == .run(RunOptions(watch: WatchOptions(count: 1), command: ["x"])))
    }

    @Test func subcommandNamesAfterRunAreJustCommands() {
        #expect(invocation(["run", "help"]) == .run(RunOptions(command: ["help"])))
        #expect(
            invocation(["run", "demo", "--scenario", "cpu"])
                == .run(RunOptions(command: ["demo", "--scenario", "cpu"])))
    }
}

@Suite struct DemoCommandTests {
    @Test func defaults() {
        #expect(invocation(["demo"]) == .demo(DemoOptions()))
        #expect(DemoOptions().scenario == nil)
        #expect(DemoOptions().demoArguments.isEmpty)
    }

    @Test(arguments: DemoScenario.allCases)
    func acceptsEveryScenario(scenario: DemoScenario) {
        var expected = DemoOptions(scenario: scenario.rawValue)
        // A scenario stalling other threads watches them (see ThreadOptionTests).
        if let selector = scenario.threadSelector { expected.watch.settings.threads = [.name(selector)] }
        #expect(invocation(["demo", "--scenario", scenario.rawValue]) == .demo(expected))
        #expect(invocation(["demo", "--scenario=\(scenario.rawValue)"]) == .demo(expected))
    }

    @Test func scenarioNamesAreTheOnesTheSpecNames() {
        #expect(
            DemoScenario.allCases.map(\.rawValue) == [
                "cpu", "sleep", "main-queue", "source", "mutex", "vdso", "observer", "two-phase", "modal",
                "modal-stall", "dispatch-main", "nested-then-stall", "pump-loop", "hiccups", "baseline", "event-loops",
                "loop-thread", "task",
            ])
    }

    @Test func argumentsAfterDoubleDashGoToTheWorkloadUntouched() {
        let parsed = invocation(["demo", "--scenario", "sleep", "--count", "2", "--", "--stalls", "5", "-h", "--", "x"])
        let expected = DemoOptions(
            watch: WatchOptions(count: 2), scenario: "sleep", demoArguments: ["--stalls", "5", "-h", "--", "x"]
        )
        #expect(parsed == .demo(expected))
    }

    @Test func sharesTheWatchOptionsOfRun() {
        let parsed = invocation(["demo", "--threshold=10ms", "--format", "json", "--output", "o", "--color", "always"])
        let watch = WatchOptions(threshold: .milliseconds(10), format: .json, output: "o", color: .always)
        #expect(parsed == .demo(DemoOptions(watch: watch)))
    }

    @Test func emptyDemoArgumentsAfterDoubleDash() {
        #expect(invocation(["demo", "--"]) == .demo(DemoOptions()))
    }
}

@Suite struct PipingRuleTests {
    @Test(arguments: [
        (nil as String?, OutputFormat.text, true, false),
        (nil, .json, true, true),
        ("-", .json, true, true),
        ("-", .text, true, false),
        ("stalls.ndjson", .json, false, false),
        ("report.txt", .text, false, false),
    ])
    func workloadStdoutMovesOnlyWhenJSONReportsOwnStdout(
        output: String?, format: OutputFormat, reportsToStdout: Bool, redirects: Bool
    ) {
        let watch = WatchOptions(format: format, output: output)
        #expect(watch.reportsGoToStandardOutput == reportsToStdout)
        #expect(watch.redirectsWorkloadStandardOutput == redirects)
    }
}
