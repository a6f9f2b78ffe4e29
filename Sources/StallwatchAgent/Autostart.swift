// Starts the agent when `stallwatch run` preloaded it: called from the library's load-time constructor.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore

/// Called by `CStallwatchAgentSupport`'s constructor when the library is loaded.
///
/// Does nothing unless `stallwatch run` set ``AgentEnvironment/socket``, or ``AgentEnvironment/listen`` asks the
/// agent to wait for `stallwatch attach` (see ``AgentListener``): a program that merely links the agent starts it
/// through ``StallMonitor/start(_:handler:)``. The variables stay in the environment, so a workload started through
/// a wrapper (`sh -c`, `env`) is watched once it execs the real program. A set-user-ID program honours none of them
/// (``AgentEnvironment/current``).
@_cdecl("stallwatch_agent_autostart")
public func stallwatchAgentAutostart() {
    let environment = AgentEnvironment.current
    guard let socketText = environment[AgentEnvironment.socket], let socket = Int32(socketText), socket >= 0 else {
        if let listen = environment[AgentEnvironment.listen], !listen.isEmpty, listen != "0" {
            AgentListener.start(environment: environment)
        }
        return
    }
    let settings = WatchSettings(environment: environment)
    let sink = CollectorSink(socket: socket, maxSamples: settings.maxSamples, maxFrames: settings.maxFrames)
    let pid = getpid()
    sink.send(.loaded(pid: pid, agentVersion: StallwatchVersion.string))
    if let collector = environment[AgentEnvironment.collectorPid].flatMap(Int32.init) {
        // Under Yama ptrace_scope 1 only an ancestor may ptrace; a workload started through a wrapper is a
        // grandchild of the collector, so name the collector explicitly.
        _ = sw_agent_set_ptracer(collector)
    }
    // A wrapper or a C program: nothing to watch, and a watcher thread would be a thread it did not expect. The
    // agent stays loaded (and the socket open), so the program it execs is watched.
    guard programMayRunEventLoop() else {
        sink.send(.mainUnwatched(pid: pid))
        return
    }
    guard settings.invalidSetting == nil else {
        sink.send(
            .refused(pid: pid, reason: "invalid \(AgentEnvironment.thresholdNanoseconds) or \(AgentEnvironment.count)"))
        return
    }
    do {
        _ = try StallMonitor.start(settings: settings, sink: sink)
    } catch {
        sink.send(.refused(pid: pid, reason: "\(error)"))
    }
}

/// Whether the program itself (not the agent) needs a library that provides an event loop; true when unknown.
private func programMayRunEventLoop() -> Bool {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    let count = buffer.withUnsafeMutableBytes { sw_agent_program_libraries($0.baseAddress, $0.count) }
    guard count >= 0 else { return true }
    return EventLoopLibraries.mayRunEventLoop(needing: EventLoopLibraries.names(in: buffer))
}
