// Library mode's side of the capture helper: starting `stallwatch _capture-helper` once, allowing it to ptrace the
// app, asking it for stacks without waiting, collecting its answers, and ending it with the monitor.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchSystem

/// Starts the capture helper and asks it for stalled threads' stacks, so the app is never signalled.
///
/// The watcher never waits for the helper: a request is sent, and its answer is collected at a later wake (or given
/// up at its deadline). A helper that misses a deadline is ended and replaced at the next request; one that misses
/// ``missedDeadlinesAllowed`` of them, cannot be found, started or allowed to trace, or does not say it is ready, is
/// not tried again: ``unavailableReason`` says why, for every later report. Used from the watcher thread only
/// (``finish(until:)`` after the watcher has stopped).
final class CaptureHelperClient {
    enum Outcome {
        case captured(HelperStack)
        /// The helper will not capture for this app, ever (see ``unavailableReason``).
        case unavailable(String)
        /// This capture failed; `threadGone` when there was no thread left to capture in-process either.
        case failed(String, threadGone: Bool)
    }

    enum Request {
        /// Sent: its outcome comes from ``collect(now:)`` under this number.
        case sent(Int)
        case unavailable(String)
    }

    /// How long a new helper has to say it is ready: it starts in tens of milliseconds.
    static let readyTimeoutNanoseconds: UInt64 = 2_000_000_000
    /// How long the first request may take: a capture's own timeout (1 s) plus a first symbolication.
    static let firstAnswerTimeoutNanoseconds: UInt64 = 3_000_000_000
    /// How long a request may take once one was answered: a warm capture and its names take milliseconds.
    static let answerTimeoutNanoseconds: UInt64 = 1_000_000_000
    /// Deadlines a helper may miss, each time replaced by a new one, before library mode stops using helpers.
    static let missedDeadlinesAllowed = 2
    /// How long ``stop()`` waits for the helper to leave before killing it.
    static let exitWaitNanoseconds: UInt64 = 200_000_000

    private let configuredPath: String?
    private var socket: Int32 = -1
    private var helperPid: pid_t = 0
    private var started = false
    private var nextRequest = 0
    /// Requests sent to the running helper and not answered yet, by number: when each must be answered.
    private var pending: [Int: UInt64] = [:]
    /// Whether some capture was answered: later requests get the shorter deadline.
    private var answered = false
    private var missedDeadlines = 0
    /// Until the running helper said it is ready: when it must have.
    private var readyDeadline: UInt64?
    private var helperPath = ""
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
        helperPath = path
        readyDeadline = sw_agent_now_ns() + Self.readyTimeoutNanoseconds
    }

    /// The earliest moment ``collect(now:)`` has something to decide: a request's or the ready deadline.
    var nextDeadline: UInt64? {
        guard !pending.isEmpty else { return nil }
        return ([readyDeadline].compactMap { $0 } + pending.values).min()
    }

    var hasPending: Bool { !pending.isEmpty }

    /// Asks for thread `tid`'s stack, without waiting: the helper stops the thread at once and answers when its
    /// frames are named.
    func request(tid: Int32, maxFrames: Int, now: UInt64) -> Request {
        start()
        if let unavailableReason { return .unavailable(unavailableReason) }
        nextRequest += 1
        let request = nextRequest
        let bytes = WireFormat.encode(HelperRequest.capture(request: request, tid: tid, maxFrames: maxFrames))
        let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        guard sent == bytes.count else {
            giveUp("the capture helper (pid \(helperPid)) exited")
            return .unavailable(unavailableReason ?? "")
        }
        pending[request] = now + (answered ? Self.answerTimeoutNanoseconds : Self.firstAnswerTimeoutNanoseconds)
        return .sent(request)
    }

    /// The outcomes decided by `now`, without waiting: answers that arrived, and requests past their deadline.
    func collect(now: UInt64) -> [(request: Int, outcome: Outcome)] {
        var outcomes: [(request: Int, outcome: Outcome)] = []
        while socket >= 0 {
            let received = receive(waitingMilliseconds: 0)
            guard let received else { break }
            guard let answer = received else {
                outcomes += giveUp("the capture helper (pid \(helperPid)) exited")
                break
            }
            outcomes += take(answer)
        }
        if let deadline = readyDeadline, now >= deadline {
            let seconds = Self.readyTimeoutNanoseconds / 1_000_000_000
            outcomes += giveUp("the capture helper \(helperPath) did not say it was ready within \(seconds) s")
        }
        if let late = pending.filter({ $0.value <= now }).keys.min() {
            outcomes += missedDeadline(request: late, now: now)
        }
        return outcomes
    }

    /// Waits until every request is decided or `deadline` passes; what is left then fails. For ``stop()``'s last
    /// stalls.
    func finish(until deadline: UInt64) -> [(request: Int, outcome: Outcome)] {
        var outcomes: [(request: Int, outcome: Outcome)] = []
        while !pending.isEmpty, socket >= 0 {
            let now = sw_agent_now_ns()
            guard now < deadline else { break }
            let wait = min(deadline, nextDeadline ?? deadline) - now
            switch receive(waitingMilliseconds: Int32(wait / 1_000_000) + 1) {
            case nil: outcomes += collect(now: sw_agent_now_ns())
            case .some(nil): outcomes += giveUp("the capture helper (pid \(helperPid)) exited")
            case .some(let answer?): outcomes += take(answer)
            }
        }
        outcomes += pending.keys.sorted().map {
            ($0, .failed("the capture helper had not answered when the monitor stopped", threadGone: false))
        }
        pending.removeAll()
        return outcomes
    }

    /// One datagram: nil when none came in time, `.some(nil)` when the helper hung up.
    private func receive(waitingMilliseconds: Int32) -> HelperAnswer?? {
        if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: CaptureHelperRole.maximumAnswerSize) }
        while true {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, waitingMilliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if received < 0, errno == EINTR || errno == EAGAIN { continue }
            guard received > 0 else { return .some(nil) }
            // Undecodable: skipped, as a late answer is.
            guard let answer = WireFormat.decode(HelperAnswer.self, from: buffer.prefix(received)) else { continue }
            return .some(answer)
        }
    }

    /// What one answer decides.
    private func take(_ answer: HelperAnswer) -> [(request: Int, outcome: Outcome)] {
        switch answer {
        case .ready(_, let version):
            readyDeadline = nil
            guard version == StallwatchVersion.string else {
                return giveUp(
                    "the capture helper is stallwatch \(version), the agent \(StallwatchVersion.string): ship the"
                        + " stallwatch built with the agent")
            }
            return []
        case .captured(let request, let stack):
            guard pending.removeValue(forKey: request) != nil else { return [] }
            answered = true
            return [(request, .captured(stack))]
        case .failed(let request, let reason, let threadGone):
            guard pending.removeValue(forKey: request) != nil else { return [] }
            return [(request, .failed(reason, threadGone: threadGone))]
        case .refused(let request, let reason):
            guard pending[request] != nil else { return [] }
            return giveUp(reason)
        }
    }

    /// A request went unanswered past its deadline: the helper is ended, its requests fail, and the next request
    /// starts a new one, unless that was the last miss allowed.
    private func missedDeadline(request: Int, now: UInt64) -> [(request: Int, outcome: Outcome)] {
        missedDeadlines += 1
        let pid = helperPid
        guard missedDeadlines < Self.missedDeadlinesAllowed else {
            return giveUp(
                "the capture helper (pid \(pid)) missed its deadline \(missedDeadlines) times; no more helpers")
        }
        let reason = "the capture helper (pid \(pid)) did not answer in time and was replaced"
        let outcomes = pending.keys.sorted().map { ($0, Outcome.failed(reason, threadGone: false)) }
        pending.removeAll()
        stop()
        started = false
        return outcomes
    }

    /// No more captures through the helper: it is ended, its requests and every later one are unavailable.
    @discardableResult
    private func giveUp(_ reason: String) -> [(request: Int, outcome: Outcome)] {
        unavailableReason = reason
        let outcomes = pending.keys.sorted().map { ($0, Outcome.unavailable(reason)) }
        pending.removeAll()
        stop()
        return outcomes
    }

    /// In a child of `fork()`: the helper is the parent's; the child's copy of its socket is closed, and the helper is
    /// neither signalled nor waited for.
    func abandonAfterFork() {
        if socket >= 0 { close(socket) }
        socket = -1
        helperPid = 0
    }

    /// Ends the helper: it leaves when its socket hangs up; one that does not within a bounded time is killed.
    /// Idempotent.
    func stop() {
        if socket >= 0 {
            close(socket)
            socket = -1
        }
        readyDeadline = nil
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
