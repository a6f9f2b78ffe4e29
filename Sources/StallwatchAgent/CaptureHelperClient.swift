// Library mode's side of the capture helper: starting `stallwatch _capture-helper` once, allowing it to ptrace the
// app, asking it for stacks with a bounded wait, and ending it with the monitor.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchSystem

/// Starts the capture helper and asks it for the stalled thread's stack, so the app is never signalled.
///
/// Used from the watcher thread only (``stop()`` after the watcher has stopped). Once the helper cannot be found,
/// started or allowed to trace, it is not tried again: ``unavailableReason`` says why, for every later report.
final class CaptureHelperClient {
    enum Outcome {
        case captured(HelperStack)
        /// The helper will not capture for this app, ever (see ``unavailableReason``).
        case unavailable(String)
        /// This capture failed; `threadGone` when there was no thread left to capture in-process either.
        case failed(String, threadGone: Bool)
    }

    /// How long the watcher waits for one answer: a capture's own timeout (1 s) plus a first symbolication.
    static let answerTimeoutNanoseconds: UInt64 = 3_000_000_000
    /// How long ``stop()`` waits for the helper to leave before killing it.
    static let exitWaitNanoseconds: UInt64 = 200_000_000

    private let configuredPath: String?
    private var socket: Int32 = -1
    private var helperPid: pid_t = 0
    private var started = false
    private var nextRequest = 0
    private var buffer: [UInt8] = []
    private(set) var unavailableReason: String?

    init(configuredPath: String?) {
        self.configuredPath = configuredPath
    }

    /// Starts the helper the first time; later calls do nothing.
    func start() {
        guard !started else { return }
        started = true
        let environment = AgentEnvironment.current
        let candidates = CaptureHelperRole.candidates(
            configured: configuredPath, environment: environment,
            agentLibrary: sw_agent_library_path().map { String(cString: $0) },
            executable: try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        guard let path = candidates.first(where: { access($0, X_OK) == 0 }) else {
            let places = candidates.isEmpty ? "nowhere to look" : "looked for " + candidates.joined(separator: ", ")
            unavailableReason =
                "the capture helper '\(CaptureHelperRole.executableName)' was not found (\(places)); ship it beside"
                + " the app or name it with StallMonitor.Configuration.helperPath or \(CaptureHelperRole.environmentVariable)"
            return
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            unavailableReason = "the capture helper's socket could not be made (\(SystemError.describe(errno)))"
            return
        }
        var spawn = Spawn(
            executable: path, arguments: [path] + CaptureHelperRole.arguments(appPid: getpid()),
            environment: Spawn.environmentStrings(AgentEnvironment.forHelper(environment)))
        spawn.fileActions = [
            .duplicate(pair[1], to: CaptureHelperRole.socketDescriptor),
            .open("/dev/null", flags: O_RDONLY, to: 0), .open("/dev/null", flags: O_WRONLY, to: 1),
        ]
        do {
            helperPid = try spawn.start()
        } catch {
            close(pair[0])
            close(pair[1])
            unavailableReason = "the capture helper \(path) could not be started (\(error))"
            return
        }
        close(pair[1])
        socket = pair[0]
        // Under Yama's ptrace_scope 1 a child may not trace its parent unless named.
        _ = sw_agent_set_ptracer(helperPid)
    }

    /// Asks for thread `tid`'s stack and waits for the answer, at most ``answerTimeoutNanoseconds``.
    func capture(tid: Int32, maxFrames: Int) -> Outcome {
        start()
        if let unavailableReason { return .unavailable(unavailableReason) }
        nextRequest += 1
        let request = nextRequest
        let bytes = WireFormat.encode(HelperRequest.capture(request: request, tid: tid, maxFrames: maxFrames))
        let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        guard sent == bytes.count else { return giveUp("the capture helper (pid \(helperPid)) exited") }
        if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: CaptureHelperRole.maximumAnswerSize) }
        let deadline = sw_agent_now_ns() + Self.answerTimeoutNanoseconds
        while true {
            let now = sw_agent_now_ns()
            guard now < deadline else {
                let seconds = Self.answerTimeoutNanoseconds / 1_000_000_000
                return .failed("the capture helper did not answer within \(seconds) s", threadGone: false)
            }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if received < 0, errno == EINTR { continue }
            guard received > 0 else { return giveUp("the capture helper (pid \(helperPid)) exited") }
            switch WireFormat.decode(HelperAnswer.self, from: buffer.prefix(received)) {
            case .ready(_, let version)? where version != StallwatchVersion.string:
                return giveUp(
                    "the capture helper is stallwatch \(version), the agent \(StallwatchVersion.string): ship the"
                        + " stallwatch built with the agent")
            case .captured(request, let stack)?: return .captured(stack)
            case .refused(request, let reason)?: return giveUp(reason)
            case .failed(request, let reason, let threadGone)?: return .failed(reason, threadGone: threadGone)
            default: continue  // `ready`, or a late answer to an earlier request
            }
        }
    }

    /// No more captures through the helper: it is ended, and `reason` stands for every later report.
    private func giveUp(_ reason: String) -> Outcome {
        unavailableReason = reason
        stop()
        return .unavailable(reason)
    }

    /// Ends the helper: it leaves when its socket hangs up; one that does not within a bounded time is killed.
    /// Idempotent.
    func stop() {
        if socket >= 0 {
            close(socket)
            socket = -1
        }
        guard helperPid > 0 else { return }
        let pid = helperPid
        helperPid = 0
        let deadline = sw_agent_now_ns() + Self.exitWaitNanoseconds
        var status: Int32 = 0
        while sw_agent_now_ns() < deadline {
            let reaped = waitpid(pid, &status, WNOHANG)
            // Gone, or reaped by the app itself (its own waitpid(-1), or SIGCHLD ignored).
            if reaped == pid || (reaped < 0 && errno == ECHILD) { return }
            usleep(2000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
    }
}
