import StallwatchCore
import Testing

@Suite struct StallwatchErrorTests {
    /// A bare name was looked up in PATH: the advice is a path. A path was not looked up: `./` before it is no advice
    /// (`.//tmp/x` was given once).
    @Test func aCommandNotFoundIsAdvisedByWhatWasGiven() {
        let bare = StallwatchError.commandNotFound("MyDaemon")
        #expect(bare.message.contains("not in PATH") && bare.message.contains("such as ./MyDaemon"))
        let path = StallwatchError.commandNotFound("/tmp/no/such/program")
        #expect(path.message == "command not found: '/tmp/no/such/program' (no such file); check the path")
        #expect(bare.exitCode == path.exitCode)
    }
}
