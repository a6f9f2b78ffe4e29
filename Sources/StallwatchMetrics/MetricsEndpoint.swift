// The metrics endpoint: a listening socket and one thread that answers `GET /metrics`, apart from all watching.
import CStallwatchSystem
import Glibc
import StallwatchCore

/// Serves the text `render` returns on `http://ADDRESS/metrics`, from a thread of its own.
///
/// Bound and listening when ``start(_:render:)`` returns, so that a port in use is found before anything else starts.
/// The thread polls the listening socket and up to ``maximumConnections`` connections at once; each connection has
/// ``connectionTimeout`` to send its request head (at most ``MetricsHTTP/maximumHeadBytes``) and take the answer,
/// then is closed, answered or not. A slow or hostile client costs only its own connection: the thread never blocks
/// on one, the watcher never waits for the thread, and the render reads a copy of the metrics (``MetricsRecorder``).
/// The thread starts with every signal blocked: a Ctrl-C meant for stallwatch (or the app) is never taken here.
public final class MetricsEndpoint: @unchecked Sendable {
    /// Why the endpoint could not listen.
    public struct ListenError: Error, Sendable {
        public let address: MetricsAddress
        public let call: String
        public let errno: Int32

        /// One line: what failed, why, and what to do.
        public var message: String {
            let advice =
                errno == EADDRINUSE
                ? "choose another port, or port 0 for any free one"
                : errno == EACCES ? "ports below 1024 need root; choose a higher one" : "choose another address"
            return "cannot serve metrics on \(address): \(call): \(String(cString: strerror(errno))); \(advice)"
        }
    }

    /// Connections served at once; more wait in the kernel's backlog.
    public static let maximumConnections = 16
    /// How long a connection may take, from its acceptance to the last byte of the answer.
    public static let connectionTimeout: UInt64 = 2_000_000_000

    /// Where it listens, with the port the kernel chose for port 0.
    public let address: MetricsAddress
    private let listening: Int32
    /// A pipe whose write end ``stop()`` writes to, waking the thread's poll.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let render: @Sendable () -> String
    private var thread: pthread_t?

    private init(
        address: MetricsAddress, listening: Int32, wake: (Int32, Int32), render: @escaping @Sendable () -> String
    ) {
        self.address = address
        self.listening = listening
        (wakeRead, wakeWrite) = wake
        self.render = render
    }

    /// Listens on `address` and starts serving.
    public static func start(
        _ address: MetricsAddress, render: @escaping @Sendable () -> String
    ) throws(ListenError) -> MetricsEndpoint {
        func failure(_ call: String) -> ListenError { ListenError(address: address, call: call, errno: Glibc.errno) }
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        // Non-blocking: the thread accepts every waiting connection and then returns to its poll.
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let descriptor = socket(family, type, 0)
        guard descriptor >= 0 else { throw failure("socket") }
        var succeeded = false
        defer { if !succeeded { close(descriptor) } }
        var one: Int32 = 1
        // A port left in TIME_WAIT by the previous run is free to take again; one in use is still refused.
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 {
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(descriptor, to: address) == 0 else { throw failure("bind") }
        guard listen(descriptor, 16) == 0 else { throw failure("listen") }
        var bound = address
        bound.port = boundPort(descriptor) ?? address.port
        var pipeEnds: [Int32] = [0, 0]
        guard sw_pipe_cloexec(&pipeEnds) == 0 else { throw failure("pipe") }
        let endpoint = MetricsEndpoint(
            address: bound, listening: descriptor, wake: (pipeEnds[0], pipeEnds[1]), render: render)
        guard endpoint.startThread() else {
            close(pipeEnds[0])
            close(pipeEnds[1])
            throw failure("pthread_create")
        }
        succeeded = true
        return endpoint
    }

    /// Stops serving, waits for the thread, and closes every socket. Idempotent.
    public func stop() {
        guard let thread else { return }
        self.thread = nil
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        pthread_join(thread, nil)
        for descriptor in [listening, wakeRead, wakeWrite] { close(descriptor) }
    }

    /// In a child of `fork()`, which has the sockets but not the thread: closes the child's copies, so that the
    /// parent's port is not held open by the child after the parent ends.
    public func abandonAfterFork() {
        guard thread != nil else { return }
        thread = nil
        for descriptor in [listening, wakeRead, wakeWrite] { close(descriptor) }
    }

    private static func bind(_ descriptor: Int32, to address: MetricsAddress) -> Int32 {
        if address.isIPv6 {
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = address.port.bigEndian
            _ = inet_pton(AF_INET6, address.host, &socketAddress.sin6_addr)
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = address.port.bigEndian
        _ = inet_pton(AF_INET, address.host, &socketAddress.sin_addr)
        return withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// The port the socket is bound to (the kernel's choice for port 0).
    private static func boundPort(_ descriptor: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard found == 0 else { return nil }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer -> UInt16 in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin6_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin_port)
            }
        }
    }

    /// Starts the serving thread with every signal blocked (it inherits the mask in force at its creation).
    private func startThread() -> Bool {
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let retained = Unmanaged.passRetained(self)
        var created = pthread_t()
        let result = pthread_create(
            &created, nil,
            { argument in
                let endpoint = Unmanaged<MetricsEndpoint>.fromOpaque(argument!).takeRetainedValue()
                _ = sw_set_thread_name(AgentThreadNames.metrics)
                var server = MetricsServer(
                    listening: endpoint.listening, wake: endpoint.wakeRead, render: endpoint.render)
                server.run()
                return nil
            }, retained.toOpaque())
        guard result == 0 else {
            retained.release()
            return false
        }
        thread = created
        return true
    }
}
