// JUnit XML for CI test reporters: the run as one test case, and one test case per distinct stall.
import StallwatchCore

/// Renders a run's stalls as a JUnit XML document, which CI systems (Jenkins, GitLab, GitHub actions that
/// read JUnit, Buildkite) show as test results.
///
/// One test case judges the run against the budget; then one test case per stall fingerprint: failed when
/// one of its stalls breaks the budget on its own (`--fail-on-stall`, `--max-stall`), with the stack as the
/// failure's text; skipped when the baseline knows it; passed otherwise. Every stall is listed in its test
/// case's output, so none is lost even when nothing fails.
public struct JUnitReport: Sendable {
    public var stalls: [StallReport]
    public var summary: RunSummary
    public var budget: StallBudget
    public var baseline: Set<String>
    /// `CLOCK_MONOTONIC` time the run ended, for the length of unfinished stalls.
    public var endOfRun: UInt64
    /// When the run started, for the suite's timestamp.
    public var startOfRun: UInt64
    public var command: String
    public var clock: WallClock
    /// Deadlocks found at the stalls' captures: one test case each, failed under a stall budget.
    public var deadlocks: [DeadlockReport] = []

    public init(
        stalls: [StallReport], summary: RunSummary, budget: StallBudget, baseline: Set<String>, startOfRun: UInt64,
        endOfRun: UInt64, command: String, clock: WallClock
    ) {
        self.stalls = stalls
        self.summary = summary
        self.budget = budget
        self.baseline = baseline
        self.startOfRun = startOfRun
        self.endOfRun = endOfRun
        self.command = command
        self.clock = clock
    }

    struct TestCase {
        var name: String
        var className: String
        var seconds: Double
        var failure: (message: String, text: String)?
        var skipped: String?
        var output: String
    }

    public func render() -> String {
        let cases = [runCase()] + deadlockCases() + stallCases()
        let failures = cases.filter { $0.failure != nil }.count
        let skipped = cases.filter { $0.skipped != nil }.count
        let seconds = Self.seconds(summary.runNanoseconds)
        // xs:dateTime without a zone, as the common JUnit schema expects.
        let timestamp = String(clock.rfc3339(monotonic: startOfRun).prefix(19))
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml +=
            "<testsuites name=\"stallwatch\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\""
            + " skipped=\"\(skipped)\" time=\"\(seconds)\">\n"
        xml +=
            "  <testsuite name=\"stallwatch run \(Self.escape(command))\" tests=\"\(cases.count)\""
            + " failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"\(seconds)\""
            + " timestamp=\"\(timestamp)\">\n"
        xml += "    <properties>\n"
        for (name, value) in properties() {
            xml += "      <property name=\"\(Self.escape(name))\" value=\"\(Self.escape(value))\"/>\n"
        }
        xml += "    </properties>\n"
        for testCase in cases {
            xml +=
                "    <testcase name=\"\(Self.escape(testCase.name))\" classname=\"\(Self.escape(testCase.className))\""
                + " time=\"\(String(format3: testCase.seconds))\">\n"
            if let skipped = testCase.skipped {
                xml += "      <skipped message=\"\(Self.escape(skipped))\"/>\n"
            }
            if let failure = testCase.failure {
                xml +=
                    "      <failure message=\"\(Self.escape(failure.message))\" type=\"stall\">"
                    + Self.escape(failure.text) + "</failure>\n"
            }
            xml += "      <system-out>" + Self.escape(testCase.output) + "</system-out>\n"
            xml += "    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    func properties() -> [(String, String)] {
        var properties = [
            ("stalls", String(summary.stallCount)),
            ("totalStallMs", String(Int(Double(summary.totalStallNanoseconds) / 1e6))),
            ("exitStatus", summary.exitStatus.map(String.init) ?? ""),
        ]
        if let first = stalls.first {
            properties.append(("thresholdMs", String(Int(Double(first.thresholdNanoseconds) / 1e6))))
            properties.append(("count", String(first.count)))
        }
        // `--thread`: per thread, `thread.NAME (tid N).stalls` and `.totalStallMs`.
        for total in summary.threads {
            let thread = total.name == "main" ? "thread.main" : "thread.\(total.name) (tid \(total.tid))"
            properties.append(("\(thread).stalls", String(total.stallCount)))
            properties.append(("\(thread).totalStallMs", String(Int(Double(total.stalledNanoseconds) / 1e6))))
        }
        return properties
    }

    func runCase() -> TestCase {
        let verdict = budget.evaluate(stalls, baseline: baseline, endOfRun: endOfRun, deadlocks: deadlocks.count)
        var output = "\(summary.stallCount) stall(s), \(Int(Double(summary.totalStallNanoseconds) / 1e6)) ms stalled"
        if verdict.excusedByBaseline > 0 { output += "; \(verdict.excusedByBaseline) known in the baseline" }
        if !budget.isSet { output += "; no stall budget set (--fail-on-stall, --max-stall, --max-stalls, --max-total)" }
        let failure =
            verdict.isBroken
            ? (
                message: "stall budget broken: " + verdict.violations.joined(separator: "; "),
                text: verdict.violations.joined(separator: "\n")
            )
            : nil
        return TestCase(
            name: "main run loop within the stall budget", className: "stallwatch.run",
            seconds: Self.seconds(summary.runNanoseconds), failure: failure, skipped: nil, output: output)
    }

    func stallCases() -> [TestCase] {
        var order: [String] = []
        var groups: [String: [StallReport]] = [:]
        for stall in stalls {
            let fingerprint = stall.fingerprint
            if groups[fingerprint] == nil { order.append(fingerprint) }
            groups[fingerprint, default: []].append(stall)
        }
        return order.map { fingerprint in
            let group = groups[fingerprint] ?? []
            let first = group[0]
            let culprit = first.dominantFrame?.symbol ?? "unknown function"
            let total = group.reduce(UInt64(0)) { $0 + ($1.duration ?? 0) }
            let lines = group.map { stall in
                "stall #\(stall.identifier) in \(stall.place): "
                    + (stall.duration.map { "\(Int((Double($0) / 1e6).rounded())) ms" } ?? "unfinished")
            }
            var testCase = TestCase(
                name: "\(culprit) [\(fingerprint)]", className: "stallwatch.stall.\(first.processName)",
                seconds: Double(total) / 1e9, failure: nil, skipped: nil, output: lines.joined(separator: "\n"))
            if baseline.contains(fingerprint) {
                testCase.skipped = "a known stall: its fingerprint is in the baseline"
            } else if let offender = group.first(where: { budget.violation(by: $0, endOfRun: endOfRun) != nil }),
                let reason = budget.violation(by: offender, endOfRun: endOfRun)
            {
                let blocker = offender.blocker.map { ", \($0.summary)" } ?? ""
                testCase.failure = (
                    "stall #\(offender.identifier) \(reason) in \(culprit)\(blocker)", Self.stackText(of: offender)
                )
            }
            return testCase
        }
    }

    /// One test case per deadlock, failed when a stall budget is set (a deadlock breaks any), with every thread's
    /// stack as its text.
    func deadlockCases() -> [TestCase] {
        deadlocks.map { deadlock in
            let text = deadlock.threads.map { thread in
                "\(thread.label) waits on \(thread.lockKind.phrase) 0x\(String(thread.lockAddress, radix: 16))"
                    + " held by tid \(thread.holder)\n" + Self.framesText(thread.frames)
            }.joined(separator: "\n\n")
            var testCase = TestCase(
                name: "deadlock: \(deadlock.summary)", className: "stallwatch.deadlock.\(deadlock.processName)",
                seconds: 0, failure: nil, skipped: nil, output: text)
            if budget.limitsStalls { testCase.failure = ("DEADLOCK in pid \(deadlock.pid): \(deadlock.summary)", text) }
            return testCase
        }
    }

    /// The culprit's sample as plain text, one frame a line.
    static func stackText(of stall: StallReport) -> String {
        let dominant = stall.dominantFrame?.symbol
        let sample = stall.samples.first { $0.frames.contains { $0.symbol == dominant } } ?? stall.samples.first
        guard let frames = sample?.frames else { return "no stack captured" }
        let blocker = stall.blocker.map { "\n\n" + $0.summary + holderText($0) } ?? ""
        return framesText(frames) + blocker
    }

    /// The stack of the thread at the end of the chain of holders, for the failure's text.
    static func holderText(_ blocker: Blocker) -> String {
        guard let holder = blocker.rootHolder, !holder.frames.isEmpty else { return "" }
        return "\nstack of \(holder.label):\n" + framesText(holder.frames)
    }

    /// Frames as plain text, one a line.
    static func framesText(_ frames: [Frame]) -> String {
        frames.enumerated().map { index, frame in
            var line = "#\(index) \(frame.symbol ?? "0x" + String(frame.address, radix: 16))"
            if let image = frame.imageName { line += " (\(image) +0x\(String(frame.offset ?? 0, radix: 16)))" }
            if let file = frame.file {
                line += " at \(file)" + (frame.line.map { ":\($0)" } ?? "")
            }
            return line
        }.joined(separator: "\n")
    }

    static func seconds(_ nanoseconds: UInt64) -> Double { (Double(nanoseconds) / 1e6).rounded() / 1e3 }

    /// Escapes text for XML content and attributes, dropping characters XML 1.0 cannot carry.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\n", "\t": escaped.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value): continue
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension String {
    /// A number with three decimals, as JUnit's `time` attributes carry seconds.
    init(format3 value: Double) {
        let thousandths = Int((value * 1000).rounded())
        let fraction = String(thousandths % 1000)
        self = "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
