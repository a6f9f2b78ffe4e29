// The environment the agent acts on: the process's own, less what a set-user-ID program's caller must not choose.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore

extension AgentEnvironment {
    /// Whether the kernel started this program in secure-execution mode (`AT_SECURE`: set-user-ID, set-group-ID,
    /// file capabilities).
    static var isSecureExecution: Bool { sw_agent_secure_execution() != 0 }

    /// This process's environment as the agent may act on it (see ``AgentEnvironment/honoured(_:secureExecution:)``).
    static var current: [String: String] {
        honoured(ProcessInfo.processInfo.environment, secureExecution: isSecureExecution)
    }

    /// Why library mode takes no stacks in a secure-execution program: a capture helper would run with the program's
    /// privileges on its caller's behalf, and a signal would interrupt the program's own calls.
    static let secureExecutionNote =
        "no stack captured: the program runs set-user-ID, set-group-ID or with file capabilities (AT_SECURE), where"
        + " stallwatch starts no capture helper and honours no STALLWATCH_* variable"
}
