// The endpoint's HTTP as pure functions: where a head ends, and which answer each request gets.
import Testing

@testable import StallwatchMetrics

@Suite struct MetricsHTTPTests {
    private func answer(_ head: String) -> MetricsHTTP.Response {
        MetricsHTTP.response(toHead: Array(head.utf8)) { "stallwatch_watched_threads 1\n" }
    }

    @Test func headEndsAtTheBlankLine() {
        #expect(MetricsHTTP.headEnd(in: Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)) == nil)
        #expect(MetricsHTTP.headEnd(in: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\nrest".utf8)) == 27)
        #expect(MetricsHTTP.headEnd(in: Array("GET / HTTP/1.0\n\n".utf8)) == 16)
    }

    @Test func getMetricsIsServed() {
        for head in ["GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", "GET /metrics?x=1 HTTP/1.0\r\n\r\n"] {
            let response = answer(head)
            #expect(response.status == 200)
            #expect(response.contentType == "text/plain; version=0.0.4; charset=utf-8")
            #expect(response.body == "stallwatch_watched_threads 1\n")
        }
        let bytes = String(decoding: answer("GET /metrics HTTP/1.1\r\n\r\n").bytes, as: UTF8.self)
        #expect(bytes.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(bytes.contains("\r\nContent-Length: 29\r\n"))
        #expect(bytes.contains("\r\nConnection: close\r\n"))
        #expect(bytes.hasSuffix("\r\n\r\nstallwatch_watched_threads 1\n"))
    }

    @Test func otherPathsMethodsAndGarbage() {
        #expect(answer("GET / HTTP/1.1\r\n\r\n").status == 404)
        #expect(answer("GET /metricsx HTTP/1.1\r\n\r\n").status == 404)
        #expect(answer("POST /other HTTP/1.1\r\n\r\n").status == 404)
        let post = answer("POST /metrics HTTP/1.1\r\n\r\n")
        #expect(post.status == 405)
        #expect(post.allow == "GET")
        #expect(String(decoding: post.bytes, as: UTF8.self).contains("\r\nAllow: GET\r\n"))
        #expect(answer("HEAD /metrics HTTP/1.1\r\n\r\n").status == 405)
        for garbage in [
            "\r\n\r\n", "GET /metrics\r\n\r\n", "GET /metrics HTTP/2\r\n\r\n", "get /metrics HTTP/1.1\r\n\r\n",
            "GET metrics HTTP/1.1\r\n\r\n", "GET  /metrics HTTP/1.1\r\n\r\n", "\u{16}\u{03}\u{01}\u{02}\n\n",
        ] {
            #expect(answer(garbage).status == 400, "\(garbage.debugDescription)")
        }
        #expect(MetricsHTTP.tooLarge.status == 431)
    }

    @Test func metricsAreRenderedOnlyForAGoodRequest() {
        var rendered = 0
        _ = MetricsHTTP.response(toHead: Array("GET / HTTP/1.1\r\n\r\n".utf8)) {
            rendered += 1
            return ""
        }
        #expect(rendered == 0)
    }
}
