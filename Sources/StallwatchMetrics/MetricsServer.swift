// The metrics endpoint's thread: one poll loop over the listening socket, its connections and the stop pipe.
import CStallwatchSystem
import Glibc
import StallwatchCore

/// Accepts connections, reads each request head, answers and closes, never blocking on any one client.
struct MetricsServer {
    /// One client, from its acceptance to its close.
    private struct Connection {
        let descriptor: Int32
        let deadline: UInt64
        var received: [UInt8] = []
        /// The answer once the head is in; nil while reading.
        var answer: [UInt8]?
        var sent = 0
    }

    let listening: Int32
    let wake: Int32
    let render: @Sendable () -> String
    private var connections: [Connection] = []
    /// Until when the listening socket is left alone: after `accept` failed for want of descriptors or memory, the
    /// socket stays readable, and polling it again at once would spin.
    private var acceptPausedUntil: UInt64 = 0
    static let acceptPause: UInt64 = 100_000_000

    init(listening: Int32, wake: Int32, render: @escaping @Sendable () -> String) {
        self.listening = listening
        self.wake = wake
        self.render = render
    }

    /// Serves until the stop pipe is written to; closes every connection on the way out.
    mutating func run() {
        defer { for connection in connections { close(connection.descriptor) } }
        while true {
            let accepting =
                connections.count < MetricsEndpoint.maximumConnections && monotonicNow() >= acceptPausedUntil
            var descriptors = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if accepting { descriptors.append(pollfd(fd: listening, events: Int16(POLLIN), revents: 0)) }
            let first = descriptors.count
            for connection in connections {
                let events = connection.answer == nil ? POLLIN : POLLOUT
                descriptors.append(pollfd(fd: connection.descriptor, events: Int16(events), revents: 0))
            }
            let timeout = pollTimeout(now: monotonicNow())
            if poll(&descriptors, nfds_t(descriptors.count), timeout) < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[0].revents != 0 { return }
            var kept: [Connection] = []
            for (index, var connection) in connections.enumerated() {
                let done = descriptors[first + index].revents != 0 && serve(&connection)
                if done || monotonicNow() >= connection.deadline {
                    close(connection.descriptor)
                } else {
                    kept.append(connection)
                }
            }
            connections = kept
            if accepting, descriptors[1].revents != 0 { acceptWaiting() }
        }
    }

    /// Milliseconds until the first connection's deadline (rounded up); -1 (no limit) without connections.
    private func pollTimeout(now: UInt64) -> Int32 {
        let paused = acceptPausedUntil > now ? [acceptPausedUntil] : []
        guard let deadline = (connections.map(\.deadline) + paused).min() else { return -1 }
        let remaining: UInt64 = deadline > now ? deadline - now : 0
        return Int32(min(remaining / 1_000_000 + 1, 60_000))
    }

    /// Takes every connection waiting, up to the limit.
    private mutating func acceptWaiting() {
        while connections.count < MetricsEndpoint.maximumConnections {
            let descriptor = sw_accept_nonblocking(listening)
            guard descriptor >= 0 else {
                if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED {
                    acceptPausedUntil = monotonicNow() + Self.acceptPause
                }
                return
            }
            connections.append(
                Connection(descriptor: descriptor, deadline: monotonicNow() + MetricsEndpoint.connectionTimeout))
        }
    }

    /// Reads what came, or sends what is owed. Returns true when the connection is done (answered, closed by its
    /// client, or failed).
    private func serve(_ connection: inout Connection) -> Bool {
        if connection.answer == nil {
            var buffer = [UInt8](repeating: 0, count: 2048)
            let count = buffer.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
            if count == 0 { return true }
            connection.received += buffer[..<count]
            if let end = MetricsHTTP.headEnd(in: connection.received) {
                connection.answer =
                    MetricsHTTP.response(toHead: Array(connection.received[..<end]), metrics: render)
                    .bytes
            } else if connection.received.count > MetricsHTTP.maximumHeadBytes {
                connection.answer = MetricsHTTP.tooLarge.bytes
            } else {
                return false
            }
        }
        guard let answer = connection.answer else { return false }
        while connection.sent < answer.count {
            let count = answer[connection.sent...].withUnsafeBytes {
                send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
            connection.sent += count
        }
        return true
    }
}
