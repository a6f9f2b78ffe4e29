// The endpoint on a real loopback socket: served, refused, not held up by a silent client, closed on stop.
import Foundation
import Glibc
import StallwatchCore
import Testing

@testable import StallwatchMetrics

@Suite struct MetricsEndpointTests {
    /// A TCP connection to `port` on 127.0.0.1; -1 if refused.
    private func connectTo(_ port: UInt16) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return -1
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }

    /// Sends `request` and reads the whole answer (the server closes after it).
    private func exchange(_ port: UInt16, _ request: String) -> String {
        let descriptor = connectTo(port)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        _ = request.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        return readAll(descriptor)
    }

    private func readAll(_ descriptor: Int32) -> String {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    private func startEndpoint(_ recorder: MetricsRecorder) throws -> MetricsEndpoint {
        try MetricsEndpoint.start(MetricsAddress(port: 0)) {
            PrometheusExposition.render(recorder.snapshot(), now: monotonicNow())
        }
    }

    @Test func servesTheRecordersMetricsAsTheyChange() throws {
        let recorder = MetricsRecorder()
        let endpoint = try startEndpoint(recorder)
        defer { endpoint.stop() }
        #expect(endpoint.address.port != 0, "port 0 is the kernel's choice, said back")
        recorder.update { $0.watchedThreads = 7 }
        let answer = exchange(endpoint.address.port, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(answer.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        #expect(answer.contains("\nstallwatch_watched_threads 7\n"))
        recorder.update { $0.watchedThreads = 8 }
        #expect(
            exchange(endpoint.address.port, "GET /metrics HTTP/1.0\r\n\r\n").contains(
                "\nstallwatch_watched_threads 8\n"))
        #expect(exchange(endpoint.address.port, "GET / HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 404 "))
        #expect(exchange(endpoint.address.port, "DELETE /metrics HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 405 "))
    }

    @Test func anOversizedHeadIsRefused() throws {
        let endpoint = try startEndpoint(MetricsRecorder())
        defer { endpoint.stop() }
        let huge = "GET /metrics HTTP/1.1\r\nX-Filler: " + String(repeating: "a", count: 20_000)
        #expect(exchange(endpoint.address.port, huge).hasPrefix("HTTP/1.1 431 "))
    }

    @Test func silentClientsHoldNothingUp() throws {
        let endpoint = try startEndpoint(MetricsRecorder())
        defer { endpoint.stop() }
        // More silent connections than the server serves at once, and one that sent half a head.
        var silent = (0..<MetricsEndpoint.maximumConnections + 2).map { _ in connectTo(endpoint.address.port) }
        let half = connectTo(endpoint.address.port)
        _ = "GET /metr".withCString { send(half, $0, strlen($0), 0) }
        silent.append(half)
        defer { for descriptor in silent where descriptor >= 0 { close(descriptor) } }
        let started = monotonicNow()
        let answer = exchange(endpoint.address.port, "GET /metrics HTTP/1.1\r\n\r\n")
        let waited = monotonicNow() - started
        #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "a scrape behind silent clients: '\(answer)'")
        // Served once the silent ones' time is up, not later (the connection timeout, with a generous margin).
        #expect(waited < MetricsEndpoint.connectionTimeout * 3, "\(waited / 1_000_000) ms")
        // The silent ones were closed at their deadline: reading finds the end.
        #expect(readAll(half) == "")
    }

    @Test func aPortInUseIsRefusedWithTheReason() throws {
        let endpoint = try startEndpoint(MetricsRecorder())
        defer { endpoint.stop() }
        do {
            let second = try MetricsEndpoint.start(endpoint.address) { "" }
            second.stop()
            Issue.record("a second endpoint listened on \(endpoint.address)")
        } catch {
            #expect(error.errno == EADDRINUSE)
            #expect(error.message.contains("cannot serve metrics on 127.0.0.1:\(endpoint.address.port): bind:"))
            #expect(error.message.contains("Address already in use; choose another port"))
        }
    }

    @Test func stopClosesTheSocket() throws {
        let endpoint = try startEndpoint(MetricsRecorder())
        let port = endpoint.address.port
        let idle = connectTo(port)
        defer { close(idle) }
        endpoint.stop()
        endpoint.stop()
        #expect(connectTo(port) == -1, "still listening after stop")
        #expect(readAll(idle) == "", "an open connection is closed on stop")
    }
}
