// ArgumentParser for `attach` and `stack`: the pid operand, their options on either side of it, and their errors.

import StallwatchCLI
import StallwatchCollector
import StallwatchCore
import Testing

@Suite struct AttachParserTests {
    @Test func pidAloneTakesTheDefaults() {
        #expect(invocation(["attach", "4242"]) == .attach(AttachOptions(pid: 4242)))
    }

    @Test func everyOptionBeforeOrAfterThePid() {
        var watch = WatchOptions(threshold: .milliseconds(50), count: 2, format: .json, output: "s.ndjson")
        watch.maxSamples = 20
        let expected = AttachOptions(watch: watch, pid: 7, mode: .external, duration: .seconds(30))
        #expect(
            invocation([
                "attach", "--mode", "external", "--duration", "30s", "--threshold", "50ms", "--count", "2",
                "--max-samples", "20", "--format", "json", "--output", "s.ndjson", "7",
            ]) == .attach(expected))
        #expect(
            invocation([
                "attach", "--mode=external", "7", "--duration=30s", "--threshold", "50ms", "--count", "2",
                "--max-samples", "20", "--format", "json", "--output", "s.ndjson",
            ]) == .attach(expected))
    }

    @Test(arguments: AttachMode.allCases)
    func modes(mode: AttachMode) {
        #expect(invocation(["attach", "--mode", mode.rawValue, "1"]) == .attach(AttachOptions(pid: 1, mode: mode)))
    }

    @Test func helpAnywhereBeforeTheTerminator() {
        #expect(ArgumentParser.parse(["attach", "42", "--help"]) == .success(.help(.attach)))
        #expect(ArgumentParser.parse(["attach", "--bogus", "-h"]) == .success(.help(.attach)))
        #expect(ArgumentParser.parse(["help", "attach"]) == .success(.help(.attach)))
    }

    @Test func missingPid() {
        #expect(
            usageError(["attach", "--duration", "5s"])
                == UsageError(message: "Missing expected argument '<pid>'", topic: .attach))
    }

    @Test(arguments: ["abc", "0", "-5", "12x", "99999999999"])
    func invalidPid(text: String) {
        let arguments = text.hasPrefix("-") ? ["attach", "--", text] : ["attach", text]
        #expect(
            usageError(arguments)?.message
                == "The value '\(text)' is invalid for '<pid>': expected a process id, a whole number above 0")
    }

    @Test func onePidOnly() {
        #expect(usageError(["attach", "1", "2"]) == UsageError(message: "Unexpected argument '2'", topic: .attach))
    }

    @Test func badModeAndDuration() {
        #expect(
            usageError(["attach", "--mode", "inside", "1"])?.message
                == "The value 'inside' is invalid for '--mode <mode>'. Please provide one of 'auto', 'agent' or 'external'."
        )
        #expect(
            usageError(["attach", "--duration", "2h", "1"])?.message
                == "The value '2h' is invalid for '--duration <duration>': unknown unit 'h'; use us, ms or s")
    }

    @Test func runOptionsStillRejectAttachOnes() {
        #expect(usageError(["run", "--mode", "agent", "x"])?.message == "Unknown option '--mode'")
    }

    @Test func aBarePidSuggestsAttach() {
        #expect(
            usageError(["4242"])?.message
                == "Unknown subcommand '4242'. To watch a running process, write 'stallwatch attach 4242'.")
    }
}

@Suite struct StackParserTests {
    @Test func pidAloneShowsTheMainThreadAsText() {
        #expect(invocation(["stack", "99"]) == .stack(StackOptions(pid: 99)))
    }

    @Test func allThreadsAndJSONOnEitherSide() {
        let expected = StackOptions(pid: 99, allThreads: true, format: .json)
        #expect(invocation(["stack", "--all-threads", "--format", "json", "99"]) == .stack(expected))
        #expect(invocation(["stack", "99", "--all-threads", "--format=json"]) == .stack(expected))
    }

    @Test func flagsTakeNoValue() {
        #expect(
            usageError(["stack", "--all-threads=yes", "1"])?.message
                == "The option '--all-threads' does not take any value, but 'yes' was specified.")
    }

    @Test func watchOptionsAreNotStackOptions() {
        #expect(usageError(["stack", "--threshold", "5ms", "1"])?.message == "Unknown option '--threshold'")
        #expect(
            usageError(["stack", "--all-thread", "1"])?.message
                == "Unknown option '--all-thread'. Did you mean '--all-threads'?")
    }

    @Test func missingPidPointsAtStackUsage() {
        let error = usageError(["stack"])
        #expect(error == UsageError(message: "Missing expected argument '<pid>'", topic: .stack))
        #expect(
            HelpText.errorText(for: error!)
                == """
                Error: Missing expected argument '<pid>'
                Usage: stallwatch stack [--all-threads] [--format <format>] <pid>
                  See 'stallwatch stack --help' for more information.

                """)
    }
}

@Suite struct AttachStackHelpTests {
    @Test func rootListsBothAndTheirExitStatuses() {
        let text = HelpText.text(for: .root)
        #expect(text.contains("\n  attach                  Watch a running process and report its stalls.\n"))
        #expect(text.contains("\n  stack                   Print a running process's stacks once"))
        #expect(text.contains("\n  \(ExitCode.noSuchProcess) "))
        #expect(text.contains("\n  \(ExitCode.permissionDenied) "))
    }

    @Test func exitCodeValues() {
        #expect(ExitCode.noSuchProcess == 66)
        #expect(ExitCode.permissionDenied == 77)
    }

    @Test func attachHelpExplainsBothModes() {
        let flat = HelpText.text(for: .attach).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("STALLWATCH_LISTEN=1"))
        #expect(flat.contains("external mode"))
        #expect(flat.contains("epoll_wait, poll, select"))
        #expect(flat.contains("is never left stopped"))
        #expect(flat.contains("USAGE: stallwatch attach [<options>] <pid>"))
    }

    @Test func examplesParse() {
        let text = HelpText.text(for: .attach) + HelpText.text(for: .stack)
        let examples = text.split(separator: "\n").filter { $0.hasPrefix("  stallwatch ") }
        #expect(examples.count == 5)
        for example in examples {
            let arguments = example.split(separator: " ").dropFirst().map(String.init)
            switch ArgumentParser.parse(arguments) {
            case .success(.attach), .success(.stack): break
            case let other: Issue.record("example '\(example)' parses as \(other)")
            }
        }
    }
}
