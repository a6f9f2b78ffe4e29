// CI budgets: which stalls a run may have before it fails, and which known ones a baseline excuses.

/// Limits on a run's stalls; a run that exceeds any of them "breaks the budget".
public struct StallBudget: Equatable, Sendable {
    /// Any stall breaks the budget (`--fail-on-stall`).
    public var failOnStall: Bool
    /// No stall may be longer (`--max-stall`).
    public var maxStall: UInt64?
    /// At most this many stalls (`--max-stalls`).
    public var maxStalls: Int?
    /// Stalled time in total may not exceed this (`--max-total`).
    public var maxTotal: UInt64?
    /// The 99th percentile of the run loop's busy periods may not exceed this (`--max-p99`): many short
    /// hiccups fail a run even though none is a stall.
    public var maxP99: UInt64?

    public init(
        failOnStall: Bool = false, maxStall: UInt64? = nil, maxStalls: Int? = nil, maxTotal: UInt64? = nil,
        maxP99: UInt64? = nil
    ) {
        self.failOnStall = failOnStall
        self.maxStall = maxStall
        self.maxStalls = maxStalls
        self.maxTotal = maxTotal
        self.maxP99 = maxP99
    }

    /// Whether a limit on stalls is set (all but `--max-p99`, which judges busy periods).
    public var limitsStalls: Bool { failOnStall || maxStall != nil || maxStalls != nil || maxTotal != nil }

    /// Whether any limit is set at all.
    public var isSet: Bool { failOnStall || maxStall != nil || maxStalls != nil || maxTotal != nil || maxP99 != nil }

    /// Judges a run's stalls, ignoring those whose fingerprint is in `baseline` (known slow paths).
    ///
    /// An unfinished stall counts with the length it had reached when the run ended (`endOfRun`), which is
    /// a lower bound. A deadlock found at a capture (`deadlocks`) breaks any stall limit (`--fail-on-stall`,
    /// `--max-stall`, `--max-stalls`, `--max-total`) at once, whatever its stall's length or the baseline: its
    /// threads can never go on.
    public func evaluate(
        _ stalls: [StallReport], baseline: Set<String> = [], endOfRun: UInt64, busyPeriods: LatencyHistogram? = nil,
        deadlocks: Int = 0
    ) -> Verdict {
        let counted = stalls.filter { !baseline.contains($0.fingerprint) }
        let lengths = counted.map { $0.length(endOfRun: endOfRun) }
        var violations: [String] = []
        if deadlocks > 0, limitsStalls {
            violations.append(
                "\(deadlocks) deadlock\(deadlocks == 1 ? "" : "s"): threads wait on each other's locks for good")
        }
        if failOnStall, !counted.isEmpty {
            violations.append("\(counted.count) stall\(counted.count == 1 ? "" : "s") (--fail-on-stall)")
        }
        if let maxStall, let longest = lengths.max(), longest > maxStall {
            let over = lengths.filter { $0 > maxStall }.count
            violations.append(
                "\(over) stall\(over == 1 ? "" : "s") longer than \(Self.milliseconds(maxStall)) ms,"
                    + " the longest \(Self.milliseconds(longest)) ms (--max-stall)")
        }
        if let maxStalls, counted.count > maxStalls {
            violations.append("\(counted.count) stalls, more than \(maxStalls) (--max-stalls)")
        }
        let total = lengths.reduce(0, +)
        if let maxTotal, total > maxTotal {
            violations.append(
                "\(Self.milliseconds(total)) ms stalled in all, more than \(Self.milliseconds(maxTotal)) ms (--max-total)"
            )
        }
        if let maxP99, let p99 = busyPeriods?.percentile(99), p99 > maxP99 {
            violations.append(
                "p99 run-loop busy period \(Self.milliseconds(p99)) ms, more than \(Self.milliseconds(maxP99)) ms (--max-p99)"
            )
        }
        return Verdict(violations: violations, excusedByBaseline: stalls.count - counted.count)
    }

    /// Why this one stall breaks the budget on its own (`--fail-on-stall`, `--max-stall`), if it does.
    /// The limits on counts and totals belong to the run, not to a stall.
    public func violation(by stall: StallReport, endOfRun: UInt64) -> String? {
        let length = stall.length(endOfRun: endOfRun)
        if let maxStall, length > maxStall {
            return
                "stalled \(Self.milliseconds(length)) ms, longer than \(Self.milliseconds(maxStall)) ms (--max-stall)"
        }
        if failOnStall { return "stalled \(Self.milliseconds(length)) ms (--fail-on-stall)" }
        return nil
    }

    /// The outcome of ``evaluate(_:baseline:endOfRun:)``.
    public struct Verdict: Equatable, Sendable {
        /// One line per broken limit; empty when the run is within budget.
        public var violations: [String]
        /// Stalls left out because the baseline knows their fingerprint.
        public var excusedByBaseline: Int

        public var isBroken: Bool { !violations.isEmpty }
    }

    static func milliseconds(_ nanoseconds: UInt64) -> String { String(Int((Double(nanoseconds) / 1e6).rounded())) }
}
