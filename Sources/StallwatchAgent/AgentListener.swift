// Listen mode: with STALLWATCH_LISTEN=1 the agent waits for `stallwatch attach` on a private Unix socket, and watches
// the main run loop only while a collector is connected.
import CStallwatchAgentSupport
import CStallwatchSystem
import CoreFoundation
import Foundation
import StallwatchCore

/// Accepts `stallwatch attach` collectors, one at a time, on `ListenSocket`'s path for this process.
///
/// Until the first collector connects the agent costs the main thread nothing: no observer is installed and the
/// listener thread sleeps in `poll`. A session installs the run-loop observers (they then stay, costing the same few
/// nanoseconds per loop iteration as under `stallwatch run`, so the activity they publish is never stale) and runs a
/// ``Watcher`` with the collector's settings, reporting through a ``CollectorSink`` exactly as under `run`. When the
/// collector goes away the watcher stops; the next collector starts a new one.
///
/// Who may connect: the socket sits in a directory of the user's own with mode 0700 and has mode 0600, and each
/// collector's credentials (`SO_PEERCRED`) must be this process's effective user or root.
final class AgentListener: @unchecked Sendable {
    /// `poll`'s peer-closed event (not exported by Swift's Glibc module).
    private static let pollPeerClosed = Int16(0x2000)  // POLLRDHUP
    /// How long a new connection has to send its ``AttachRequest``.
    private static let requestTimeoutMilliseconds: Int32 = 2000

    /// The socket's path, removed at exit by the process that created it (not by a forked child).
    nonisolated(unsafe) private static var socketPath: String?
    nonisolated(unsafe) private static var ownerPid: pid_t = 0
    /// Created on the first session and shared by every session's watcher.
    nonisolated(unsafe) private static var observation: MainLoopObservation?

    private let listening: Int32
    private let pid = getpid()
    private let uid = geteuid()

    private init(listening: Int32) {
        self.listening = listening
    }

    /// Creates the socket and starts the listener thread; explains on stderr why not if it cannot.
    ///
    /// The program asked for listen mode explicitly, so a failure is worth one line on its stderr; the program
    /// itself runs on undisturbed either way.
    static func start(environment: [String: String]) {
        do {
            let descriptor = try listen(environment: environment)
            let listener = AgentListener(listening: descriptor)
            let thread = Thread {
                // Named from the thread itself, as the watcher is (see `Watcher.start`).
                _ = sw_set_thread_name(AgentThreadNames.listener)
                listener.run()
            }
            thread.name = AgentThreadNames.listener
            thread.stackSize = 256 * 1024
            thread.start()
        } catch {
            FileHandle.standardError.write(
                Data("stallwatch agent: not listening for 'stallwatch attach': \(error.reason)\n".utf8))
        }
    }

    struct ListenError: Error {
        let reason: String
    }

    /// Creates the private directory and the listening socket, mode 0600.
    private static func listen(environment: [String: String]) throws(ListenError) -> Int32 {
        let uid = geteuid()
        let directory = ListenSocket.directory(runtimeDirectory: environment["XDG_RUNTIME_DIR"], uid: uid)
        try makePrivateDirectory(directory, uid: uid)
        let path = directory + "/" + ListenSocket.fileName(pid: getpid())
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw ListenError(reason: "the socket path \(path) is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8)
            buffer[path.utf8.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ListenError(reason: "socket: \(errorText())") }
        // A socket left by an earlier process with this pid (killed before it could clean up).
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(descriptor, 4) == 0 else {
            let reason = "\(path): \(errorText())"
            close(descriptor)
            unlink(path)
            throw ListenError(reason: reason)
        }
        socketPath = path
        ownerPid = getpid()
        atexit {
            if let path = AgentListener.socketPath, getpid() == AgentListener.ownerPid { unlink(path) }
        }
        return descriptor
    }

    /// Creates `directory` with mode 0700, or checks that the existing one is a real directory of `uid`'s that no
    /// one else can enter: anything else could let another user swap the socket.
    private static func makePrivateDirectory(_ directory: String, uid: uid_t) throws(ListenError) {
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw ListenError(reason: "cannot create \(directory): \(errorText())")
        }
        var status = stat()
        guard lstat(directory, &status) == 0 else {
            throw ListenError(reason: "cannot inspect \(directory): \(errorText())")
        }
        guard status.st_mode & S_IFMT == S_IFDIR, status.st_uid == uid, status.st_mode & 0o077 == 0 else {
            throw ListenError(
                reason: "\(directory) is not a private directory of uid \(uid) (it must be a directory owned by"
                    + " that user with mode 0700); remove it and restart the program")
        }
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }

    // MARK: Sessions

    /// The connected collector and the watcher serving it.
    private struct Session {
        let connection: Int32
        let collectorPid: Int32
        let watcher: Watcher
    }

    private func run() {
        var session: Session?
        while true {
            var descriptors = [pollfd(fd: listening, events: Int16(POLLIN), revents: 0)]
            if let session {
                descriptors.append(pollfd(fd: session.connection, events: Self.pollPeerClosed, revents: 0))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if let current = session, descriptors[1].revents != 0 {
                // The collector detached (or exited): stop watching until the next one.
                LoopThreads.stop()
                ExecutorThreads.stop()
                current.watcher.stop()
                close(current.connection)
                session = nil
            }
            if descriptors[0].revents & Int16(POLLIN) != 0 {
                let connection = accept(listening, nil, nil)
                guard connection >= 0 else { continue }
                // accept4 is not exported by Swift's Glibc module. Only a fork and exec by another thread in the few
                // instructions between the two calls could inherit the connection, and it would merely hold it open.
                _ = sw_agent_set_cloexec(connection, 1)
                if let current = session {
                    refuse(
                        connection,
                        "another stallwatch (pid \(current.collectorPid)) is attached; one collector at a time",
                        requestPending: true)
                } else {
                    session = startSession(on: connection)
                }
            }
        }
    }

    /// Checks the collector and its request, then starts a watcher that reports to it.
    private func startSession(on connection: Int32) -> Session? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            refuse(connection, "cannot read the collector's credentials", requestPending: true)
            return nil
        }
        guard credentials.uid == uid || credentials.uid == 0 else {
            refuse(
                connection,
                "stallwatch runs as uid \(credentials.uid), but only uid \(uid) (this process's user) or root may attach",
                requestPending: true)
            return nil
        }
        guard let request = receiveRequest(connection) else {
            refuse(connection, "expected an attach request from stallwatch \(StallwatchVersion.string)")
            return nil
        }
        guard request.collectorVersion == StallwatchVersion.string else {
            refuse(
                connection,
                "the agent is version \(StallwatchVersion.string) and stallwatch is version"
                    + " \(request.collectorVersion); use the same version for both")
            return nil
        }
        let settings = request.settings
        guard settings.invalidSetting == nil else {
            refuse(connection, "invalid threshold, count or max-samples in the attach request")
            return nil
        }
        // Under Yama ptrace_scope 1 only ancestors may ptrace us; the collector is not one. (0 when the collector's
        // pid is not visible in our pid namespace: then the kernel could not match it anyway.)
        if credentials.pid > 0 { _ = sw_agent_set_ptracer(credentials.pid) }
        let sink = CollectorSink(socket: connection, maxSamples: settings.maxSamples, maxFrames: settings.maxFrames)
        sink.send(.loaded(pid: pid, agentVersion: StallwatchVersion.string))
        let watcher = Watcher(
            board: ActivityBoard.shared, settings: settings, sink: sink, observation: Self.observeMainLoopOnce())
        watcher.start()
        // Loop threads are found at their next run of their loop, executor threads at their next job: the agent's
        // stand-ins for CoreFoundation and libdispatch are in front, since a listening agent is preloaded.
        LoopThreads.watch(settings.threads)
        ExecutorThreads.watch(settings.threads)
        return Session(connection: connection, collectorPid: credentials.pid, watcher: watcher)
    }

    /// Observes the main loop from the first session on, and wakes it, so that an idle loop publishes its state (and
    /// the collector hears that it is watched) now rather than at its next event.
    private static func observeMainLoopOnce() -> MainLoopObservation {
        if let observation { return observation }
        let created = MainLoopObservation()
        observation = created
        if sw_agent_main_thread_exited() == 0, sw_agent_existing_main_run_loop(nil) != nil {
            CFRunLoopWakeUp(CFRunLoopGetMain())
        }
        return created
    }

    /// The collector's first datagram, if it arrives in time and is an ``AttachRequest``.
    private func receiveRequest(_ connection: Int32) -> AttachRequest? {
        var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Self.requestTimeoutMilliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
        let received = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        guard received > 0 else { return nil }
        return WireFormat.decode(AttachRequest.self, from: buffer.prefix(received))
    }

    /// Tells the collector why not, and hangs up.
    ///
    /// A socket closed with unread data makes the peer's next read fail with `ECONNRESET` before it sees what was
    /// sent, so the collector's request is read (and dropped) first: waited for if `requestPending`, as the
    /// collector sends it right after connecting.
    private func refuse(_ connection: Int32, _ reason: String, requestPending: Bool = false) {
        var readable = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        if poll(&readable, 1, requestPending ? 500 : 0) > 0 {
            var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
            while buffer.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0
            {}
        }
        let bytes = WireFormat.encode(AgentMessage.refused(pid: pid, reason: reason))
        _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(connection)
    }
}

/// `struct ucred` from `<sys/socket.h>`, which Swift's Glibc module leaves out (it needs `_GNU_SOURCE`).
private struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
