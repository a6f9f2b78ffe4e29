// The named stall scenarios as the demo uses them (the list itself is StallwatchCore's ``DemoScenario``).
import StallwatchCore

typealias Scenario = DemoScenario

extension Scenario {
    /// Whether the program has no run loop and serves its main queue with `dispatchMain()`.
    var usesDispatchMain: Bool { self == .dispatchMain }

    /// The `--list` output: one scenario per line, name, summary and culprit.
    static var listing: String {
        let width = allCases.map(\.rawValue.count).max() ?? 0
        return allCases.map { scenario in
            let name = scenario.rawValue + String(repeating: " ", count: width + 2 - scenario.rawValue.count)
            let culprit = scenario.culprit.map { " (culprit: \($0))" } ?? ""
            return name + scenario.behaviour + culprit
        }.joined(separator: "\n")
    }
}
