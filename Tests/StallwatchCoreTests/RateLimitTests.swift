// `--rate-limit N/DURATION`: its notation, the fixed windows per fingerprint (on a fake clock), and how a stall's
// assembler applies it.
import Testing

@testable import StallwatchCore

@Suite struct RateLimitParsingTests {
    @Test(arguments: [
        ("2/1h", 2, 3_600), ("5/10m", 5, 600), ("1/30s", 1, 30), ("100/1d", 100, 86_400), ("3/90m", 3, 5_400),
        ("007/2h", 7, 7_200), ("1/30d", 1, 2_592_000),
    ])
    func readsCountAndWindow(text: String, count: Int, seconds: UInt64) {
        #expect(RateLimit.parse(text) == .success(RateLimit(count: count, windowNanoseconds: seconds * 1_000_000_000)))
    }

    @Test(arguments: [
        ("", RateLimit.Failure.shape), ("5", .shape), ("5m", .shape), ("/10m", .count), ("x/10m", .count),
        ("0/10m", .zero), ("5/0m", .zero), ("5/0s", .zero), ("-5/10m", .negative), ("5/-10m", .negative),
        ("5/10", .missingUnit), ("5/10ms", .unknownUnit("ms")), ("5/10M", .unknownUnit("M")), ("5/m", .shape),
        ("5/31d", .tooLong), ("5/99999999999999999999h", .tooLong), ("99999999/1h", .count), ("1.5/1h", .count),
        ("5/1.5h", .unknownUnit(".5h")), (" 5/10m", .count), ("5/10m ", .unknownUnit("m ")),
    ])
    func refusesWhatIsNotALimit(text: String, failure: RateLimit.Failure) {
        #expect(RateLimit.parse(text) == .failure(failure))
    }

    @Test func theDescriptionIsTheNotationRead() {
        for text in ["2/1h", "5/10m", "1/30s", "3/90m", "4/2d"] {
            #expect((try? RateLimit.parse(text).get())?.description == text)
        }
        #expect(RateLimit.libraryDefault.description == "5/10m")
    }

    @Test func libraryModeSettingMayTurnItOff() {
        #expect(RateLimit.parseSetting("off") == .success(nil))
        #expect(RateLimit.parseSetting("2/1h") == .success(RateLimit(count: 2, windowNanoseconds: 3_600_000_000_000)))
        #expect(RateLimit.parseSetting("none") == .failure(.shape))
    }

    @Test func settingsNameALimitOutOfRange() {
        var settings = WatchSettings()
        settings.rateLimit = RateLimit(count: 0, windowNanoseconds: 1_000_000_000)
        #expect(settings.invalidSetting?.contains("rateLimit: the count") == true)
        settings.rateLimit = RateLimit(count: 1, windowNanoseconds: 1_000)
        #expect(settings.invalidSetting?.contains("window") == true)
        settings.rateLimit = .libraryDefault
        #expect(settings.invalidSetting == nil)
    }
}

@Suite struct RateLimiterTests {
    static let second: UInt64 = 1_000_000_000

    /// Which of the stalls of one fingerprint at `times` (seconds on a fake clock) are admitted under 2 per 10 s.
    func admitted(_ times: [Double], limit: RateLimit = RateLimit(count: 2, windowNanoseconds: 10 * second))
        -> [Bool]
    {
        var limiter = RateLimiter(limit)
        return times.map { limiter.admit("f", at: UInt64($0 * 1e9)) }
    }

    @Test func theFirstNOfEachWindowAreAdmitted() {
        #expect(admitted([100, 101, 102, 103, 109.9]) == [true, true, false, false, false])
        // The window opened at 100 ends at 110: the stall at 110 opens the next one, which runs to 120.
        #expect(admitted([100, 101, 102, 110, 111, 119, 120]) == [true, true, false, true, true, false, true])
    }

    @Test func theNextWindowOpensAtItsFirstStallNotOnAGrid() {
        // Opened at 100, over at 110; the stall at 115 opens [115, 125), so 124 is in it and 125 is not.
        #expect(admitted([100, 115, 116, 124, 125]) == [true, true, true, false, true])
    }

    @Test func fingerprintsHaveWindowsOfTheirOwn() {
        var limiter = RateLimiter(RateLimit(count: 1, windowNanoseconds: 60 * Self.second))
        let decisions = [("a", 0), ("b", 1), ("a", 2), ("a", 3), ("b", 4)].map { limiter.admit($0.0, at: $0.1) }
        #expect(decisions == [true, true, false, false, false])
        #expect(limiter.suppressed("a") == 2 && limiter.suppressed("b") == 1 && limiter.suppressed("c") == 0)
    }

    /// A stall admitted under its first sample's fingerprint whose report ends with another counts towards that one.
    @Test func anAdmittedStallCountsTowardsItsFinalFingerprint() {
        var limiter = RateLimiter(RateLimit(count: 2, windowNanoseconds: 10 * Self.second))
        var decisions = [limiter.admit("a", at: 0), limiter.admit("b", at: 1)]
        limiter.recount(from: "b", to: "a", admittedAt: 1)
        // "a" has had two full reports; "b" none.
        decisions += [limiter.admit("a", at: 2), limiter.admit("b", at: 3), limiter.admit("b", at: 4)]
        #expect(decisions == [true, true, false, true, true])
        limiter.recount(from: "a", to: "a", admittedAt: 0)
        let unchanged = limiter.admit("b", at: 5)
        #expect(!unchanged)
        // Into a window that is over, or none: a new one opens at the stall's detection.
        limiter.recount(from: "b", to: "c", admittedAt: 3)
        limiter.recount(from: "a", to: "b", admittedAt: 20 * Self.second)
        let afterNewWindows = [
            limiter.admit("c", at: 6), limiter.admit("c", at: 7), limiter.admit("b", at: 21 * Self.second),
        ]
        #expect(afterNewWindows == [true, false, true])
    }

    /// Two threads' stalls may be decided out of order: an earlier moment counts in the window it precedes.
    @Test func aMomentBeforeTheWindowCountsInIt() {
        #expect(admitted([100, 99, 98]) == [true, true, false])
    }

    @Test func windowsOverArePrunedWhenThereAreMany() {
        var limiter = RateLimiter(RateLimit(count: 1, windowNanoseconds: Self.second))
        for index in 0..<RateLimiter.pruneAbove { _ = limiter.admit("f\(index)", at: 0) }
        #expect(limiter.windowCount == RateLimiter.pruneAbove)
        let new = limiter.admit("new", at: 5 * Self.second)
        #expect(new && limiter.windowCount == 1, "every window but the new one was over")
        let forgotten = limiter.admit("f0", at: 5 * Self.second)
        #expect(forgotten, "a forgotten fingerprint starts a new window")
    }
}

@Suite struct StallRateLimitTests {
    let frame = Frame(
        address: 0x1000, image: "/app/Daemon", offset: 0x10, symbol: "Store.load()", file: "S.swift", line: 3)

    func stall(_ identifier: Int, detectedAt: UInt64) -> StallAssembler {
        StallAssembler(
            onset: StallOnset(
                identifier: identifier, phase: .afterWaiting, start: detectedAt - 240_000_000, detectedAt: detectedAt,
                sequence: 1),
            pid: 42, tid: 42, processName: "Daemon", settings: WatchSettings(), captureMethod: .ptrace)
    }

    @Test func theFirstSampleDecidesAndAStallOverTheLimitTakesNoMore() {
        var limiter: RateLimiter? = RateLimiter(RateLimit(count: 1, windowNanoseconds: 60_000_000_000))
        var first = stall(1, detectedAt: 1_000_000_000)
        first.applyRateLimit(&limiter)
        #expect(!first.isSuppressed, "nothing decided before a sample names the fingerprint")
        first.add(frames: [frame], capturedAt: 1_000_000_000)
        first.applyRateLimit(&limiter)
        first.add(frames: [frame], capturedAt: 1_080_000_000)
        #expect(!first.isSuppressed && first.report.samples.count == 2)

        var second = stall(2, detectedAt: 2_000_000_000)
        second.add(frames: [frame], capturedAt: 2_000_000_000)
        second.applyRateLimit(&limiter)
        #expect(second.isSuppressed && second.report.suppressed)
        second.add(frames: [frame], capturedAt: 2_080_000_000)
        #expect(second.report.samples.count == 1, "the sample that named it, no more")
        #expect(second.report.fingerprint == first.report.fingerprint)
        #expect(second.report.culprit?.symbol == "Store.load()")
        // Decided once: applying again neither admits it nor counts it twice.
        second.applyRateLimit(&limiter)
        #expect(second.isSuppressed && limiter?.suppressed(first.report.fingerprint) == 1)
    }

    /// The first sample of a spinning thread may land in a helper; the stall's report names the function it spent
    /// its time in, and that is the fingerprint its full report counts towards.
    @Test func aFullStallCountsUnderTheFingerprintItsReportShows() {
        var limiter: RateLimiter? = RateLimiter(RateLimit(count: 2, windowNanoseconds: 60_000_000_000))
        let helper = Frame(
            address: 0x2000, image: "/app/Daemon", offset: 0x20, symbol: "clockNow()", file: "C.swift", line: 9)
        var odd = stall(1, detectedAt: 1_000_000_000)
        odd.add(frames: [helper, frame], capturedAt: 1_000_000_000)
        odd.applyRateLimit(&limiter)
        for moment in 1...4 { odd.add(frames: [frame], capturedAt: 1_000_000_000 + UInt64(moment) * 80_000_000) }
        odd.applyRateLimit(&limiter, atEnd: true)
        let suppressed = (2...3).map { identifier in
            var next = stall(identifier, detectedAt: UInt64(identifier) * 1_000_000_000)
            next.add(frames: [frame], capturedAt: UInt64(identifier) * 1_000_000_000)
            next.applyRateLimit(&limiter)
            #expect(next.report.fingerprint == odd.report.fingerprint)
            return next.isSuppressed
        }
        #expect(!odd.isSuppressed && suppressed == [false, true], "two full reports of one fingerprint")
    }

    @Test func aStallWithoutSamplesIsDecidedAtItsEnd() {
        var limiter: RateLimiter? = RateLimiter(RateLimit(count: 1, windowNanoseconds: 60_000_000_000))
        var first = stall(1, detectedAt: 1_000_000_000)
        first.applyRateLimit(&limiter, atEnd: true)
        var second = stall(2, detectedAt: 2_000_000_000)
        second.applyRateLimit(&limiter, atEnd: true)
        #expect(!first.isSuppressed && second.isSuppressed)
    }

    @Test func withoutALimitNothingIsSuppressed() {
        var limiter: RateLimiter?
        for identifier in 1...20 {
            var report = stall(identifier, detectedAt: UInt64(identifier) * 1_000_000_000)
            report.add(frames: [frame], capturedAt: 1)
            report.applyRateLimit(&limiter, atEnd: true)
            #expect(!report.isSuppressed)
        }
    }

    @Test func theSummaryCountsEveryStallAndTheShortenedOnes() {
        var limiter: RateLimiter? = RateLimiter(RateLimit(count: 2, windowNanoseconds: 60_000_000_000))
        let reports = (1...5).map { identifier in
            var report = stall(identifier, detectedAt: UInt64(identifier) * 1_000_000_000)
            report.add(frames: [frame], capturedAt: UInt64(identifier) * 1_000_000_000)
            report.applyRateLimit(&limiter)
            report.end(at: UInt64(identifier) * 1_000_000_000 + 100_000_000)
            return report.finished(cpuNow: nil, now: 0)
        }
        let summary = RunSummary(
            stalls: reports, runNanoseconds: 10_000_000_000, watchedPids: [42], exitStatus: 0,
            warnings: [])
        #expect(summary.stallCount == 5 && summary.suppressedCount == 3)
        #expect(summary.topCulprits.first?.count == 5, "suppressed stalls keep their culprit")
        #expect(StallBudget(maxStalls: 4).evaluate(reports, endOfRun: 0).isBroken, "budgets count every stall")
    }
}
