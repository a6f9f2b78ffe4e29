// `--metrics [HOST]:PORT` on `run`, `demo` and `attach`, and nowhere else.
import StallwatchCLI
import StallwatchCore
import StallwatchMetrics
import Testing

@Suite struct MetricsOptionTests {
    func watch(_ arguments: [String]) -> WatchOptions? {
        switch invocation(arguments) {
        case .run(let options)?: options.watch
        case .demo(let options)?: options.watch
        case .attach(let options)?: options.watch
        default: nil
        }
    }

    @Test func offByDefault() {
        #expect(watch(["run", "./d"])?.metrics == nil)
    }

    @Test func takenByRunDemoAndAttach() {
        let loopback = MetricsAddress(host: "127.0.0.1", port: 9464)
        #expect(watch(["run", "--metrics", ":9464", "./d"])?.metrics == loopback)
        #expect(watch(["demo", "--metrics=127.0.0.1:9464"])?.metrics == loopback)
        #expect(
            watch(["attach", "42", "--metrics", "[::1]:0"])?.metrics
                == MetricsAddress(host: "::1", port: 0, isIPv6: true))
    }

    @Test func aBadAddressIsAUsageErrorNamingTheOption() {
        guard case .failure(let error) = ArgumentParser.parse(["run", "--metrics", "host:80", "./d"]) else {
            Issue.record("accepted a host name")
            return
        }
        #expect(error.message.hasPrefix("The value 'host:80' is invalid for '--metrics <address>': the host must be"))
        guard case .failure = ArgumentParser.parse(["stack", "--metrics", ":9464", "42"]) else {
            Issue.record("stack took --metrics")
            return
        }
    }

    @Test func helpListsIt() {
        for topic in [HelpTopic.run, .demo, .attach] {
            #expect(HelpText.text(for: topic).contains("--metrics <address>"), "\(topic)")
        }
        #expect(!HelpText.text(for: .stack).contains("--metrics"))
    }
}
