// The little HTTP the metrics endpoint speaks, as pure functions of bytes: what a request asks, what to answer.

/// Reads a request's head and chooses the answer: `GET /metrics` only.
public enum MetricsHTTP {
    /// The most a request's head may take: a scraper's is a few hundred bytes.
    public static let maximumHeadBytes = 8192

    /// A response: status line, headers and body, ready to send.
    public struct Response: Equatable, Sendable {
        public var status: Int
        public var reason: String
        public var contentType: String
        public var body: String
        /// `Allow: GET` on a 405.
        public var allow: String?

        /// The bytes to send: HTTP/1.1, `Connection: close` (one request per connection keeps the server simple).
        public var bytes: [UInt8] {
            let body = Array(self.body.utf8)
            var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(contentType)\r\n"
            head += "Content-Length: \(body.count)\r\nConnection: close\r\n"
            if let allow { head += "Allow: \(allow)\r\n" }
            return Array((head + "\r\n").utf8) + body
        }

        static func plain(_ status: Int, _ reason: String, allow: String? = nil) -> Response {
            Response(
                status: status, reason: reason, contentType: "text/plain; charset=utf-8", body: reason + "\n",
                allow: allow)
        }
    }

    /// Where a request's head ends (just past its blank line), if it has.
    public static func headEnd(in bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") {
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { return index + 2 }
                if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\r"),
                    bytes[index + 2] == UInt8(ascii: "\n")
                {
                    return index + 3
                }
            }
            index += 1
        }
        return nil
    }

    /// The answer to a complete head: 200 with `metrics()` for `GET /metrics` (any query ignored), 404 for another
    /// path, 405 for another method, 400 for what is not an HTTP/1 request line.
    public static func response(toHead head: [UInt8], metrics: () -> String) -> Response {
        let lineEnd = head.firstIndex(of: UInt8(ascii: "\n")) ?? head.count
        var line = head[..<lineEnd]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        let words = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard words.count == 3, let method = String(validating: words[0], as: UTF8.self),
            let target = String(validating: words[1], as: UTF8.self),
            let version = String(validating: words[2], as: UTF8.self), version.hasPrefix("HTTP/1."),
            !method.isEmpty, method.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }),
            target.hasPrefix("/")
        else { return .plain(400, "Bad Request") }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" else { return .plain(404, "Not Found") }
        guard method == "GET" else { return .plain(405, "Method Not Allowed", allow: "GET") }
        return Response(
            status: 200, reason: "OK", contentType: PrometheusExposition.contentType, body: metrics(), allow: nil)
    }

    /// The answer to a head past ``maximumHeadBytes``.
    public static let tooLarge = Response.plain(431, "Request Header Fields Too Large")
}
