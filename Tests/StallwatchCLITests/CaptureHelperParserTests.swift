// The hidden `_capture-helper` role: parsed exactly as the agent writes it, refused otherwise, never in help.
import StallwatchCLI
import StallwatchCore
import Testing

@Suite struct CaptureHelperParserTests {
    @Test func theAgentsArgumentsParse() {
        let arguments = CaptureHelperRole.arguments(appPid: 4242)
        #expect(invocation(arguments) == .captureHelper(socket: CaptureHelperRole.socketDescriptor, appPid: 4242))
    }

    @Test func anythingElseIsAUsageError() {
        for arguments in [
            ["_capture-helper"], ["_capture-helper", "--fd", "3"], ["_capture-helper", "--fd", "x", "--pid", "1"],
            ["_capture-helper", "--pid", "1", "--fd", "3"], ["_capture-helper", "--fd", "3", "--pid", "0"],
        ] {
            guard case .failure = ArgumentParser.parse(arguments) else {
                Issue.record("accepted \(arguments)")
                continue
            }
        }
    }

    @Test func helpDoesNotShowIt() {
        for topic in HelpTopic.allCases {
            #expect(!HelpText.text(for: topic).contains(CaptureHelperRole.subcommand))
        }
    }
}
