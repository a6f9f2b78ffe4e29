import Foundation
import StallwatchCore
import Testing

@Suite struct ThreadInspectorTests {
    /// A child started by one of this process's threads is among its children, and so named.
    @Test func aChildProcessIsFoundAndNamed() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        defer {
            // SIGKILL: the test process may block SIGTERM, and its children inherit the mask.
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let pid = child.processIdentifier
        #expect(ThreadInspector.children(of: getpid()).contains(pid))
        #expect(ThreadInspector.name(pid: pid, tid: pid) == "sleep")
        #expect(ThreadInspector.threads(pid: pid) == [pid])
    }
}
