import StallwatchCore
import Testing

struct TrustedEnvironmentTests {
    let callers = [
        "STALLWATCH_HELPER": "/home/mallory/run-me", "STALLWATCH_SYMBOLIZER": "/home/mallory/also-me",
        "STALLWATCH_LISTEN": "1", "STALLWATCH_AGENT_FD": "3", AgentEnvironment.metrics: "0.0.0.0:9464",
        "XDG_RUNTIME_DIR": "/root", "PATH": "/home/mallory/bin",
        "LD_PRELOAD": "/home/mallory/lib.so", "LD_LIBRARY_PATH": "/home/mallory", "ASAN_OPTIONS": "log_path=/etc/x",
        "HOME": "/home/mallory", "LANG": "C.UTF-8", "LC_ALL": "C",
    ]

    @Test func anOrdinaryProgramHonoursItsWholeEnvironment() {
        #expect(AgentEnvironment.honoured(callers, secureExecution: false) == callers)
    }

    @Test func aSecureExecutionProgramHonoursNothingThatChoosesCodeOrPlaces() {
        let honoured = AgentEnvironment.honoured(callers, secureExecution: true)
        #expect(honoured.keys.filter { $0.hasPrefix("STALLWATCH_") }.isEmpty)
        #expect(honoured["PATH"] == nil && honoured["XDG_RUNTIME_DIR"] == nil)
        #expect(honoured["HOME"] == "/home/mallory")
    }

    @Test func aHelperGetsOnlyTheLocaleASystemPathAndTheAgentsOwnSettings() {
        let helper = AgentEnvironment.forHelper(callers, settings: ["STALLWATCH_SYMBOLIZER": "runtime", "EVIL": "1"])
        #expect(
            helper == [
                "PATH": AgentEnvironment.helperPath, "LANG": "C.UTF-8", "LC_ALL": "C",
                "STALLWATCH_SYMBOLIZER": "runtime",
            ])
    }
}
