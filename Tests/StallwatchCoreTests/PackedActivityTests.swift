// The one-word encoding of run-loop state survives the round trip, including clock wrap-around.
import Testing

@testable import StallwatchCore

@Suite struct PackedActivityTests {
    @Test(arguments: LoopPhase.allCases.filter { $0 != .notStarted })
    func roundTripsPhaseAndTime(phase: LoopPhase) {
        let time: UInt64 = 5_000_123_456_789
        let word = PackedActivity.pack(sequence: 7, phase: phase, timestamp: time)
        let snapshot = PackedActivity.unpack(word, now: time + 3_000_000_000)
        #expect(snapshot.phase == phase)
        #expect(snapshot.timestamp == time / 1000 * 1000)
    }

    @Test func recoversTimeAcrossTheFortyBitWrap() {
        let wrap: UInt64 = (1 << 40) * 1000  // nanoseconds in 2^40 microseconds
        let time = 3 * wrap - 2_000_000  // 2 ms before a wrap
        let word = PackedActivity.pack(sequence: 1, phase: .afterWaiting, timestamp: time)
        let snapshot = PackedActivity.unpack(word, now: time + 10_000_000)  // read 10 ms later, after the wrap
        #expect(snapshot.timestamp == time)
    }

    /// The main thread may publish between the watcher's clock read and its load of the word: the stamp is then a
    /// little after the watcher's `now`. It must stay that time, not fall to 0 (which made a stall "since boot").
    @Test func aStampJustAfterTheReadersClockIsKept() {
        let now: UInt64 = 21_438_013_000_000
        let word = PackedActivity.pack(sequence: 3, phase: .afterWaiting, timestamp: now + 25_000)
        let snapshot = PackedActivity.unpack(word, now: now)
        #expect(snapshot.timestamp == now + 25_000)
        var detector = StallDetector(threshold: 80_000_000, count: 3)
        #expect(detector.observe(snapshot, now: now).isEmpty, "no stall from a fresh transition")
        #expect(detector.timeouts(at: now) == 0)
    }

    @Test func consecutivePublicationsDiffer() {
        let first = PackedActivity.pack(sequence: 1, phase: .beforeSources, timestamp: 1_000_000)
        let second = PackedActivity.pack(sequence: 2, phase: .beforeSources, timestamp: 1_000_000)
        #expect(first != second)
        #expect(PackedActivity.unpack(first, now: 2_000_000) != PackedActivity.unpack(second, now: 2_000_000))
    }

    @Test func zeroIsTheInitialState() {
        #expect(PackedActivity.unpack(0, now: 123) == .initial)
    }
}
