// `--metrics [HOST]:PORT` and `STALLWATCH_METRICS`: what is taken, and what each mistake is told.
import Testing

@testable import StallwatchMetrics

@Suite struct MetricsAddressTests {
    @Test func hostDefaultsToLoopback() throws {
        let address = try MetricsAddress.parse(":9464").get()
        #expect(address == MetricsAddress(host: "127.0.0.1", port: 9464))
        #expect(address.url == "http://127.0.0.1:9464/metrics")
    }

    @Test func numericHostsAndLocalhost() throws {
        #expect(try MetricsAddress.parse("0.0.0.0:80").get() == MetricsAddress(host: "0.0.0.0", port: 80))
        #expect(try MetricsAddress.parse("localhost:0").get() == MetricsAddress(host: "127.0.0.1", port: 0))
        let v6 = try MetricsAddress.parse("[::1]:65535").get()
        #expect(v6 == MetricsAddress(host: "::1", port: 65535, isIPv6: true))
        #expect(v6.description == "[::1]:65535")
    }

    @Test(arguments: [
        ("", "expected [HOST]:PORT"),
        ("9464", "':9464' for this port"),
        (":", "the port must be a whole number from 0 to 65535"),
        (":65536", "from 0 to 65535"),
        (":-1", "from 0 to 65535"),
        (":+80", "from 0 to 65535"),
        (":0x10", "from 0 to 65535"),
        (":000009464", "from 0 to 65535"),
        ("example.com:9464", "numeric IP address or localhost"),
        ("1.2.3:9464", "numeric IP address"),
        ("256.0.0.1:9464", "numeric IP address"),
        ("::1:9464", "in brackets"),
        ("[::1:9464", "in brackets"),
        ("[]:9464", "in brackets"),
        ("[nope]:9464", "not a numeric IPv6 address"),
        ("127.0.0.1:", "the port must be"),
    ])
    func mistakesAreNamed(text: String, reason: String) {
        switch MetricsAddress.parse(text) {
        case .success(let address): Issue.record("'\(text)' was taken as \(address)")
        case .failure(let error): #expect(error.reason.contains(reason), "'\(text)': \(error.reason)")
        }
    }
}
