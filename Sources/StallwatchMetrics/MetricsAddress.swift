// Where the metrics endpoint listens: `--metrics [HOST]:PORT` and `STALLWATCH_METRICS`, parsed once for both.
import Glibc

/// A numeric address and port to serve `/metrics` on.
///
/// Only numeric hosts (and `localhost`) are taken: a name would need a resolver, which could wait on the network
/// before the workload starts, and could resolve to an address the user did not mean to open.
public struct MetricsAddress: Equatable, Sendable, CustomStringConvertible {
    /// The host when none is given (`:9464`): loopback, so that nothing is served to the network unasked.
    public static let defaultHost = "127.0.0.1"

    /// The numeric host: dotted IPv4, or IPv6 without its brackets.
    public var host: String
    /// The port; 0 lets the kernel choose a free one (said when the endpoint starts).
    public var port: UInt16
    public var isIPv6: Bool

    public init(host: String = MetricsAddress.defaultHost, port: UInt16, isIPv6: Bool = false) {
        self.host = host
        self.port = port
        self.isIPv6 = isIPv6
    }

    /// `127.0.0.1:9464`, or `[::1]:9464`.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Where a scraper finds the metrics.
    public var url: String { "http://\(self)/metrics" }

    /// What is wrong with an address, said as the end of "The value 'x' is invalid for '--metrics <address>'".
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Parses `[HOST]:PORT`: `:9464`, `127.0.0.1:9464`, `0.0.0.0:9464`, `[::1]:9464`, `localhost:9464`.
    public static func parse(_ text: String) -> Result<MetricsAddress, ParseError> {
        let example = "expected [HOST]:PORT, such as ':9464' or '127.0.0.1:9464'"
        guard let colon = text.lastIndex(of: ":") else {
            let hint = !text.isEmpty && text.allSatisfy(\.isASCIIDigit) ? " (':\(text)' for this port)" : ""
            return .failure(ParseError(reason: example + hint))
        }
        let hostPart = String(text[..<colon])
        let portPart = text[text.index(after: colon)...]
        guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy(\.isASCIIDigit),
            let port = UInt32(portPart), port <= UInt32(UInt16.max)
        else {
            return .failure(ParseError(reason: "the port must be a whole number from 0 to 65535 (0: any free port)"))
        }
        if hostPart.isEmpty { return .success(MetricsAddress(port: UInt16(port))) }
        if hostPart == "localhost" { return .success(MetricsAddress(port: UInt16(port))) }
        if hostPart.hasPrefix("[") {
            guard hostPart.hasSuffix("]"), hostPart.count > 2 else {
                return .failure(ParseError(reason: "an IPv6 host goes in brackets: '[::1]:9464'"))
            }
            let inner = String(hostPart.dropFirst().dropLast())
            guard isNumeric(inner, family: AF_INET6) else {
                return .failure(ParseError(reason: "'\(inner)' is not a numeric IPv6 address"))
            }
            return .success(MetricsAddress(host: inner, port: UInt16(port), isIPv6: true))
        }
        if hostPart.contains(":") {
            return .failure(ParseError(reason: "an IPv6 host goes in brackets: '[::1]:9464'"))
        }
        guard isNumeric(hostPart, family: AF_INET) else {
            return .failure(
                ParseError(reason: "the host must be a numeric IP address or localhost, not a name to look up"))
        }
        return .success(MetricsAddress(host: hostPart, port: UInt16(port)))
    }

    /// Whether `host` is a numeric address of `family`, as `inet_pton` reads it (a pure check: no lookup).
    static func isNumeric(_ host: String, family: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return buffer.withUnsafeMutableBytes { inet_pton(family, host, $0.baseAddress) } == 1
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
