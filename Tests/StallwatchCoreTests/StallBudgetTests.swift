// CI budgets: which runs fail, and which stalls a baseline excuses.
import Testing

@testable import StallwatchCore

@Suite struct StallBudgetTests {
    let end: UInt64 = 100_000_000_000

    func stall(_ milliseconds: UInt64?, culprit: String = "Cache.load()") -> StallReport {
        var stall = report(samples: [stack([culprit])])
        stall.start = 1_000_000_000
        stall.end = milliseconds.map { stall.start + $0 * 1_000_000 }
        return stall
    }

    @Test func noBudgetNeverBreaks() {
        let verdict = StallBudget().evaluate([stall(5000), stall(nil)], endOfRun: end)
        #expect(!verdict.isBroken)
        #expect(!StallBudget().isSet)
    }

    @Test func failOnStallBreaksOnAnyStall() {
        #expect(StallBudget(failOnStall: true).evaluate([stall(300)], endOfRun: end).isBroken)
        #expect(!StallBudget(failOnStall: true).evaluate([], endOfRun: end).isBroken)
    }

    @Test func maxStallComparesTheLongest() {
        let budget = StallBudget(maxStall: 500_000_000)
        #expect(!budget.evaluate([stall(300), stall(500)], endOfRun: end).isBroken)
        let verdict = budget.evaluate([stall(300), stall(700)], endOfRun: end)
        #expect(verdict.violations == ["1 stall longer than 500 ms, the longest 700 ms (--max-stall)"])
        #expect(budget.violation(by: stall(700), endOfRun: end)?.contains("longer than 500 ms") == true)
        #expect(budget.violation(by: stall(300), endOfRun: end) == nil)
    }

    @Test func aDeadlockBreaksEveryStallLimitButTheBusyPeriods() {
        let deadlock = "1 deadlock: threads wait on each other's locks for good"
        for budget in [
            StallBudget(failOnStall: true), StallBudget(maxStall: 10_000_000_000), StallBudget(maxStalls: 5),
            StallBudget(maxTotal: 10_000_000_000),
        ] {
            // Its stall short, or excused by the baseline: the deadlock still counts.
            let verdict = budget.evaluate([stall(300)], baseline: [stall(300).fingerprint], endOfRun: end, deadlocks: 1)
            #expect(verdict.violations == [deadlock], "\(budget)")
        }
        #expect(!StallBudget(maxP99: 1).evaluate([], endOfRun: end, deadlocks: 1).isBroken)
        #expect(!StallBudget().evaluate([], endOfRun: end, deadlocks: 2).isBroken)
        #expect(!StallBudget(failOnStall: true).evaluate([], endOfRun: end, deadlocks: 0).isBroken)
    }

    @Test func unfinishedStallCountsWithTheLengthItReached() {
        // A deadlock that had lasted 99 s when the run ended breaks a 1 s limit.
        let verdict = StallBudget(maxStall: 1_000_000_000).evaluate([stall(nil)], endOfRun: end)
        #expect(verdict.isBroken)
    }

    @Test func countAndTotalLimits() {
        let stalls = [stall(300), stall(300), stall(300)]
        #expect(StallBudget(maxStalls: 3).evaluate(stalls, endOfRun: end).isBroken == false)
        #expect(
            StallBudget(maxStalls: 2).evaluate(stalls, endOfRun: end).violations == [
                "3 stalls, more than 2 (--max-stalls)"
            ])
        #expect(StallBudget(maxTotal: 900_000_000).evaluate(stalls, endOfRun: end).isBroken == false)
        #expect(StallBudget(maxTotal: 899_000_000).evaluate(stalls, endOfRun: end).isBroken)
    }

    @Test func baselineExcusesKnownFingerprintsOnly() {
        let known = stall(2000, culprit: "Known.slowPath()")
        let new = stall(2000, culprit: "New.regression()")
        let budget = StallBudget(failOnStall: true)
        let excused = budget.evaluate([known], baseline: [known.fingerprint], endOfRun: end)
        #expect(!excused.isBroken)
        #expect(excused.excusedByBaseline == 1)
        #expect(budget.evaluate([known, new], baseline: [known.fingerprint], endOfRun: end).isBroken)
    }
}

@Suite struct MaxP99Tests {
    @Test func p99OfBusyPeriodsBreaksTheBudget() {
        var periods = LatencyHistogram()
        for _ in 0..<100 { periods.record(nanoseconds: 150_000_000) }
        let budget = StallBudget(maxP99: 100_000_000)
        #expect(budget.evaluate([], endOfRun: 0, busyPeriods: periods).isBroken)
        var smooth = LatencyHistogram()
        for _ in 0..<100 { smooth.record(nanoseconds: 5_000_000) }
        #expect(!budget.evaluate([], endOfRun: 0, busyPeriods: smooth).isBroken)
        #expect(!budget.evaluate([], endOfRun: 0, busyPeriods: nil).isBroken, "nothing recorded, nothing broken")
    }
}
