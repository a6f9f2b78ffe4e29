// Finds the agent listening in a running process (STALLWATCH_LISTEN=1) and opens a session with it.
import CStallwatchSystem
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchSystem

/// Connects `stallwatch attach` to a process's listening agent.
enum AgentConnection {
    /// How long the agent has to answer the attach request.
    static let answerTimeoutMilliseconds: Int32 = 2000
    /// `O_PATH` (not exported by Swift's Glibc module): a descriptor that only names a directory.
    static let openPath: Int32 = 0o10000000

    /// Why no session could be opened: a sentence for the user.
    struct Failure: Error {
        let reason: String
        /// The agent answered, and refused.
        var refusal = false
        /// Another process serves the socket at the process's path: said as it is, whatever the environment says.
        var impostor = false
    }

    /// Connects to `target`'s agent and sends the session's settings.
    ///
    /// - Parameter deadline: when the session must be over (`--duration`), `CLOCK_MONOTONIC` ns: the agent's answer
    ///   is awaited until then at the latest.
    /// - Returns: the connected socket, with the agent's first message (`loaded`) still queued for the collector.
    static func connect(to target: TargetProcess, settings: WatchSettings, deadline: UInt64?) throws(Failure) -> Int32 {
        let pid = target.pid
        // Another user's process: its environment and its root are out of reach, so whether an agent listens there
        // cannot even be known; the socket's permissions would only be a guess at the cause.
        let ourUser = geteuid()
        if ourUser != 0, target.uid != ourUser {
            throw Failure(
                reason: "pid \(pid) (\(target.name)) belongs to user \(Preflight.userName(target.uid)) (uid"
                    + " \(target.uid)) and stallwatch runs as \(Preflight.userName(ourUser)), so it cannot tell whether"
                    + " an agent listens there; run stallwatch as that user or as root")
        }
        let environment = processEnvironment(pid)
        let status = ProcStatus(pid: pid)
        let directory = ListenSocket.directory(runtimeDirectory: environment?["XDG_RUNTIME_DIR"], uid: target.uid)
        let name = ListenSocket.fileName(pid: status?.namespacePid ?? pid)
        // Through the process's own root, so a process in a container (another mount and pid namespace) is found too.
        let path = "/proc/\(pid)/root" + directory + "/" + name
        // Non-blocking while connecting: a listener that never accepts (a full backlog) must not hold up the session.
        let descriptor = socket(
            AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(reason: "cannot create a socket: \(errorText())") }
        // Before connecting, so that every message the agent sends says which process sent it.
        _ = sw_socket_pass_credentials(descriptor)
        do throws(Failure) {
            try connect(descriptor, to: path, shown: directory + "/" + name)
            // Anyone who may create the file can serve that path; only the process itself gets the request.
            try checkPeer(descriptor, target: target, shown: directory + "/" + name)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            let request = AttachRequest(settings: settings, collectorVersion: StallwatchVersion.string)
            let bytes = WireFormat.encode(request)
            let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let sendError = errno
            // Even if the agent hung up first, it may have said why (another collector is attached): read that.
            do {
                try awaitWelcome(descriptor, milliseconds: answerMilliseconds(until: deadline))
            } catch  where sent <= 0 {
                guard error.refusal else {
                    throw Failure(
                        reason:
                            "the agent's socket closed before the attach request: \(SystemError.describe(sendError))"
                    )
                }
                throw error
            }
            return descriptor
        } catch {
            close(descriptor)
            guard environment?[AgentEnvironment.listen] != nil || environment == nil || error.impostor else {
                throw Failure(
                    reason: "pid \(pid) was not started with \(AgentEnvironment.listen)=1 and the stallwatch agent")
            }
            throw error
        }
    }

    /// - Parameter shown: the path as the process sees it, for messages.
    private static func connect(_ descriptor: Int32, to path: String, shown: String) throws(Failure) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        var reachable = path
        var directory: Int32 = -1
        defer { if directory >= 0 { close(directory) } }
        if path.utf8.count >= capacity {
            // Too long for sockaddr_un: reach the directory through a descriptor instead.
            let slash = path.lastIndex(of: "/") ?? path.startIndex
            directory = open(String(path[..<slash]), Self.openPath | O_CLOEXEC)
            reachable = "/proc/self/fd/\(directory)" + path[slash...]
            guard directory >= 0, reachable.utf8.count < capacity else {
                throw Failure(reason: "the agent's socket path \(path) is too long")
            }
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: reachable.utf8)
            buffer[reachable.utf8.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected != 0 else { return }
        switch errno {
        case ENOENT, ENOTDIR:
            throw Failure(reason: "no stallwatch agent listens in the process (no socket \(shown))")
        case ECONNREFUSED:
            throw Failure(reason: "the socket \(shown) is left over from an agent that is gone")
        case EAGAIN:
            throw Failure(
                reason: "the agent at \(shown) accepts no connection (its queue is full): it is not answering")
        case EACCES, EPERM:
            throw Failure(
                reason: "not permitted to use the agent's socket \(shown): it belongs to the process's user; run"
                    + " stallwatch as that user or as root")
        default:
            throw Failure(reason: "cannot connect to \(shown): \(errorText())")
        }
    }

    /// Checks that the socket's other end was made by the target itself (`SO_PEERCRED`): otherwise every message
    /// would be dropped as not the target's, and the session would watch nothing while saying it watches.
    private static func checkPeer(_ descriptor: Int32, target: TargetProcess, shown: String) throws(Failure) {
        let peer = sw_socket_peer_pid(descriptor)
        guard peer != target.pid else { return }
        let server =
            peer > 0 ? "pid \(peer) (\(ThreadInspector.processName(pid: peer)))" : "a process stallwatch cannot see"
        throw Failure(
            reason: "the socket \(shown) is served by \(server), not by pid \(target.pid), so it is not that process's"
                + " agent", impostor: true)
    }

    /// How long to wait for the agent's answer: ``answerTimeoutMilliseconds``, or what is left before `deadline`.
    static func answerMilliseconds(until deadline: UInt64?, now: UInt64 = monotonicNow()) -> Int32 {
        guard let deadline else { return answerTimeoutMilliseconds }
        let left = deadline > now ? (deadline - now) / 1_000_000 : 0
        return Int32(min(UInt64(answerTimeoutMilliseconds), left))
    }

    /// Waits for the agent's first message: `loaded` (left queued for the collector) or `refused` (its reason).
    private static func awaitWelcome(_ descriptor: Int32, milliseconds: Int32) throws(Failure) {
        let ready = try? FileDescriptor.wait(for: Int16(POLLIN), on: descriptor, milliseconds: milliseconds)
        guard let ready, ready != 0 else {
            let limit = milliseconds < answerTimeoutMilliseconds ? " (what --duration left)" : ""
            throw Failure(reason: "the agent did not answer within \(milliseconds) ms\(limit)")
        }
        var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
        let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_PEEK)) }
        guard received > 0 else { throw Failure(reason: "the agent closed the connection without answering") }
        switch WireFormat.decode(AgentMessage.self, from: buffer.prefix(received)) {
        case .loaded?: return
        case .refused(_, let reason)?: throw Failure(reason: "the agent refused: \(reason)", refusal: true)
        default: throw Failure(reason: "the agent's answer was not understood (another stallwatch version?)")
        }
    }

    /// The process's environment at its start (`/proc/PID/environ`), or nil where it may not be read.
    static func processEnvironment(_ pid: Int32) -> [String: String]? {
        // The process may exit mid-read (ESRCH): then there is no environment to read.
        guard let data = FileBytes.read("/proc/\(pid)/environ") else { return nil }
        var environment: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return environment
    }

    private static func errorText() -> String { SystemError.describe(errno) }
}
