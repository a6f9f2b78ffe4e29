// Library mode's rate limit: on by default (5 per fingerprint per 10 minutes), set by STALLWATCH_RATE_LIMIT, in an
// app built as a user's package builds it (Tests/Fixtures/LibraryUser, `--spins N`: N CPU stalls in one function).
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct LibraryRateLimitTests {
    /// The app's stalls in `spinForMilliseconds`, in order, as its handler encoded them.
    func spins(_ run: LibraryUserApp.Run) -> [StallRecord] {
        run.stalls.filter { $0.culprit?.symbol == "spinForMilliseconds(_:)" }.sorted { $0.id < $1.id }
    }

    @Test func fivePerTenMinutesByDefault() throws {
        let run = try LibraryUserApp.run(["--spins", "6"])
        #expect(run.status == 0)
        let spins = spins(run)
        try #require(spins.count == 6, "\(run.stalls.map(\.culprit?.symbol))")
        // Of each fingerprint the first five in full (one stall a loaded machine gave a fingerprint of its own would
        // be its first); the spins share one.
        #expect(RateLimitTests.followTheRule(run.stalls, perFingerprint: 5) >= 1)
        #expect(spins.last?.suppressed == true && spins.last?.samples.isEmpty == true)
        #expect(spins.first?.suppressed == nil && spins.first?.samples.isEmpty == false)
        // The sleep stall has a fingerprint of its own, with a window of its own.
        #expect(run.stalls.first { $0.culprit?.symbol == "sleepHalfASecond()" }?.suppressed == nil)
    }

    @Test func theEnvironmentSetsItOrTurnsItOff() throws {
        let limited = try LibraryUserApp.run(["--spins", "3"], environment: ["STALLWATCH_RATE_LIMIT": "1/1h"])
        #expect(limited.status == 0)
        let shortened = spins(limited)
        try #require(shortened.count == 3)
        #expect(RateLimitTests.followTheRule(limited.stalls, perFingerprint: 1) >= 1)
        #expect(shortened.last?.suppressed == true)
        for stall in shortened where stall.suppressed == true {
            #expect(stall.samples.isEmpty && stall.capture.method == "ptrace")
            #expect(try #require(stall.durationMs.value) > 350, "a short record keeps the stall's length")
        }
        let off = try LibraryUserApp.run(["--spins", "6"], environment: ["STALLWATCH_RATE_LIMIT": "off"])
        #expect(spins(off).count == 6 && spins(off).allSatisfy { $0.suppressed == nil && !$0.samples.isEmpty })
    }

    @Test func aBadValueStopsTheMonitorFromStarting() throws {
        let run = try LibraryUserApp.run(environment: ["STALLWATCH_RATE_LIMIT": "5/10"])
        // The app exits 70 when StallMonitor.start throws (its invalidConfiguration names the variable).
        #expect(run.status == 70)
        #expect(run.stalls.isEmpty)
    }
}
