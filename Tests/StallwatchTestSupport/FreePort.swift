// A loopback port nothing listens on, for a server a test starts and must name beforehand (Prometheus, a library-mode
// app told its port).
import Foundation
import Glibc
import StallwatchMetrics

public enum FreePort {
    /// A port the kernel had free just now: bound to 127.0.0.1 port 0 and let go. Another process could take it in
    /// between (the kernel hands ports out in turn, so that is rare); a test retries with a new one when its server
    /// says the port is taken.
    public static func pick() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(reason: "socket: \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw Failure(reason: "bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// A listening socket on a free loopback port, to find out what a server does with a port in use; close it after.
    public static func occupied() throws -> (port: UInt16, descriptor: Int32) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 1) == 0
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard descriptor >= 0, listening else {
            close(descriptor)
            throw Failure(reason: "cannot listen on a loopback port: \(errno)")
        }
        return (UInt16(bigEndian: address.sin_port), descriptor)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let reason: String
        public init(reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// GET `path` from 127.0.0.1:`port`: the whole answer (status line, headers, body), or nil if nothing answers.
    public static func get(port: UInt16, path: String = "/metrics") -> String? {
        MetricsScrape.get(port: port, path: path)
    }
}
