// ArgumentParser on command lines it rejects: the exact messages and the usage topic they point at.

import StallwatchCLI
import StallwatchCollector
import StallwatchCore
import Testing

/// Parses and returns the usage error, recording an issue if the command line was accepted.
func usageError(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> UsageError? {
    switch ArgumentParser.parse(arguments) {
    case .success(let invocation):
        Issue.record("expected a usage error, got \(invocation)", sourceLocation: sourceLocation)
        return nil
    case .failure(let error):
        return error
    }
}

@Suite struct MissingArgumentTests {
    @Test(arguments: [["run"], ["run", "--"], ["run", "--threshold", "50ms"], ["run", "--count=2", "--"]])
    func runWithoutCommand(arguments: [String]) {
        #expect(usageError(arguments) == UsageError(message: "Missing expected argument '<command> ...'", topic: .run))
    }

    @Test(arguments: [
        (["run", "--threshold"], "--threshold <duration>"),
        (["run", "--threshold", "--count", "2", "x"], "--threshold <duration>"),
        (["run", "--count"], "--count <n>"),
        (["run", "--format", "--color", "never", "x"], "--format <format>"),
        (["run", "--output", "--", "x"], "--output <file>"),
        (["run", "--color"], "--color <color>"),
        (["demo", "--scenario"], "--scenario <name>"),
    ])
    func optionWithoutValue(arguments: [String], synopsis: String) {
        let topic = HelpTopic(rawValue: arguments[0])
        #expect(usageError(arguments) == UsageError(message: "Missing value for '\(synopsis)'", topic: topic ?? .root))
    }

    @Test func valueAfterOptionMayNotLookLikeAnOption() {
        #expect(
            usageError(["run", "--threshold", "-v", "x"])?.message == "Missing value for '--threshold <duration>'")
    }

    /// A negative number is a value, and the option says what is wrong with it (it said "Missing value").
    @Test func aNegativeValueIsRefusedForWhatItIs() {
        #expect(
            usageError(["run", "--threshold", "-5ms", "x"])?.message
                == "The value '-5ms' is invalid for '--threshold <duration>': the duration must be positive")
        #expect(usageError(["run", "--count", "-2", "x"])?.message.hasPrefix("The value '-2' is invalid") == true)
    }
}

@Suite struct UnknownOptionTests {
    @Test(arguments: [
        (
            ["run", "--treshold", "80ms", "x"], "Unknown option '--treshold'. Did you mean '--threshold'?",
            HelpTopic.run
        ),
        (["run", "--thresold=80ms", "x"], "Unknown option '--thresold'. Did you mean '--threshold'?", .run),
        (["run", "--cont", "3", "x"], "Unknown option '--cont'. Did you mean '--count'?", .run),
        (["run", "--colour", "never", "x"], "Unknown option '--colour'. Did you mean '--color'?", .run),
        (["run", "--formats", "json", "x"], "Unknown option '--formats'. Did you mean '--format'?", .run),
        (["run", "-threshold", "80ms", "x"], "Unknown option '-threshold'. Did you mean '--threshold'?", .run),
        (["demo", "--senario", "cpu"], "Unknown option '--senario'. Did you mean '--scenario'?", .demo),
        (["--verison"], "Unknown option '--verison'. Did you mean '--version'?", .root),
        (["--hlep"], "Unknown option '--hlep'. Did you mean '--help'?", .root),
    ])
    func suggestsAnOptionWithinTwoEdits(arguments: [String], message: String, topic: HelpTopic) {
        #expect(usageError(arguments) == UsageError(message: message, topic: topic))
    }

    @Test(arguments: [
        (["run", "--verbose", "x"], "--verbose", HelpTopic.run),
        (["run", "--limit", "80ms", "x"], "--limit", .run),
        (["run", "--thrshldz", "80ms", "x"], "--thrshldz", .run),
        (["run", "--scenario", "cpu", "x"], "--scenario", .run),
        (["run", "-x", "y"], "-x", .run),
        (["run", "-t", "80ms", "x"], "-t", .run),
        (["run", "-", "x"], "-", .run),
        (["demo", "--xyz"], "--xyz", .demo),
        (["--bogus"], "--bogus", .root),
        (["help", "--bogus"], "--bogus", .root),
    ])
    func noSuggestionWhenNothingIsClose(arguments: [String], name: String, topic: HelpTopic) {
        #expect(usageError(arguments) == UsageError(message: "Unknown option '\(name)'", topic: topic))
    }

    @Test func rootPointsSubcommandOptionsToTheSubcommand() {
        let error = usageError(["--threshold", "5ms", "run", "x"])
        #expect(error?.message == "Unknown option '--threshold'. Options of 'run' and 'demo' go after the subcommand.")
        #expect(error?.topic == .root)
    }

    @Test(arguments: [["run", "--help=yes", "x"], ["--version=2"], ["demo", "--version=1"]])
    func flagsTakeNoValue(arguments: [String]) {
        let name = arguments.first { $0.contains("=") }!.split(separator: "=")[0]
        let value = arguments.first { $0.contains("=") }!.split(separator: "=")[1]
        #expect(
            usageError(arguments)?.message
                == "The option '\(name)' does not take any value, but '\(value)' was specified."
        )
    }

    @Test(arguments: [
        ["run", "--bogus", "--help"],
        ["run", "--threshold", "abc", "-h"],
        ["run", "--output", "out.txt", "--help"],
        ["run", "--count=0", "--help", "x"],
    ])
    func helpWinsOverMistakesBesideIt(arguments: [String]) {
        #expect(ArgumentParser.parse(arguments) == .success(.help(.run)))
    }
}

@Suite struct InvalidValueTests {
    private func thresholdMessage(_ value: String, _ reason: String) -> String {
        "The value '\(value)' is invalid for '--threshold <duration>': \(reason)"
    }

    @Test(arguments: [
        ("abc", DurationParser.Failure.notANumber),
        ("80", .missingUnit),
        ("80h", .unknownUnit("h")),
        ("0ms", .zero),
        ("-80ms", .negative),
        ("nan", .notFinite),
        ("inf", .notFinite),
        ("4000s", .tooLarge),
        ("", .empty),
    ])
    func thresholdRejectsBadDurations(value: String, failure: DurationParser.Failure) {
        let error = usageError(["run", "--threshold=\(value)", "./d"])
        #expect(error == UsageError(message: thresholdMessage(value, failure.description), topic: .run))
    }

    @Test func thresholdWithoutUnitSuggestsHowToWriteIt() {
        let message = usageError(["run", "--threshold", "80", "./d"])?.message
        #expect(message?.hasPrefix("The value '80' is invalid for '--threshold <duration>': ") == true)
        #expect(message?.contains("write 80ms or 0.08s") == true)
    }

    @Test(arguments: ["999us", "0.5ms", "1us"])
    func thresholdBelowOneMillisecond(value: String) {
        #expect(
            usageError(["run", "--threshold", value, "./d"])
                == UsageError(message: thresholdMessage(value, "the threshold must be at least 1ms"), topic: .run)
        )
    }

    @Test func demoThresholdIsCheckedToo() {
        #expect(usageError(["demo", "--threshold", "10"])?.topic == .demo)
    }

    @Test(arguments: ["0", "101", "-1", "abc", "3.5", "", "1e2", " 3"])
    func countOutsideOneToHundred(value: String) {
        #expect(
            usageError(["run", "--count=\(value)", "./d"])
                == UsageError(
                    message: "The value '\(value)' is invalid for '--count <n>': expected a whole number from 1 to 100",
                    topic: .run
                )
        )
    }

    @Test func formatListsItsValues() {
        #expect(
            usageError(["run", "--format", "xml", "./d"])?.message
                == "The value 'xml' is invalid for '--format <format>'. Please provide one of 'text' and 'json'."
        )
    }

    @Test func colorListsItsValues() {
        #expect(
            usageError(["run", "--color=blue", "./d"])?.message
                == "The value 'blue' is invalid for '--color <color>'. Please provide one of 'auto', 'always' or 'never'."
        )
    }

    @Test func emptyOutputFile() {
        #expect(
            usageError(["run", "--output=", "./d"])?.message
                == "The value '' is invalid for '--output <file>': expected a file name, or '-' for stdout"
        )
    }

    @Test func unknownScenarioListsTheValidOnes() {
        let error = usageError(["demo", "--scenario", "gpu"])
        #expect(
            error?.message == """
                The value 'gpu' is invalid for '--scenario <name>'. Please provide one of the following:
                  - cpu
                  - sleep
                  - main-queue
                  - source
                  - mutex
                  - vdso
                  - observer
                  - two-phase
                  - modal
                  - modal-stall
                  - dispatch-main
                  - nested-then-stall
                  - pump-loop
                  - hiccups
                  - baseline
                  - event-loops
                  - loop-thread
                  - task
                """
        )
        #expect(error?.topic == .demo)
    }
}

@Suite struct UnexpectedArgumentTests {
    @Test func demoRejectsBarePositional() {
        #expect(
            usageError(["demo", "extra"])
                == UsageError(
                    message: "Unexpected argument 'extra'. Put arguments for the demo workload after '--'.",
                    topic: .demo
                )
        )
    }

    @Test func demoPositionalThatNamesAScenarioSuggestsTheOption() {
        #expect(
            usageError(["demo", "mutex"])?.message == "Unexpected argument 'mutex'. Did you mean '--scenario mutex'?")
    }

    @Test func demoPositionalBeforeDoubleDashIsStillAnError() {
        #expect(usageError(["demo", "x", "--", "y"])?.message.hasPrefix("Unexpected argument 'x'.") == true)
    }

    @Test(arguments: [(["rn"], "run"), (["dmeo"], "demo"), (["hlp"], "help"), (["help", "rnu"], "run")])
    func misspeltSubcommand(arguments: [String], suggestion: String) {
        #expect(
            usageError(arguments)
                == UsageError(
                    message: "Unknown subcommand '\(arguments.last!)'. Did you mean '\(suggestion)'?",
                    topic: .root
                )
        )
    }

    @Test func programGivenWithoutRun() {
        #expect(
            usageError(["./MyDaemon", "--port", "8080"])
                == UsageError(
                    message: "Unknown subcommand './MyDaemon'. To watch a program, write 'stallwatch run ./MyDaemon'.",
                    topic: .root
                )
        )
    }

    @Test func helpForAnUnknownSubcommand() {
        #expect(usageError(["help", "bogus"]) == UsageError(message: "Unknown subcommand 'bogus'", topic: .root))
    }

    @Test func helpTakesOneSubcommand() {
        #expect(usageError(["help", "run", "demo"]) == UsageError(message: "Unexpected argument 'demo'", topic: .root))
    }
}
