// The one-word encoding of run-loop state: phase, mode and sequence below the board's stamp (the stamp itself, and
// its wrap-around, are the C board's: ActivityBoardTests).
import Testing

@testable import StallwatchCore

@Suite struct PackedActivityTests {
    @Test(arguments: LoopPhase.allCases.filter { $0 != .notStarted })
    func roundTripsPhaseAndMode(phase: LoopPhase) {
        let word = PackedActivity.pack(sequence: 7, phase: phase, mode: 5) | 123 << 24
        let snapshot = PackedActivity.unpack(word, timestamp: 5_000_123_456_789)
        #expect(snapshot.phase == phase)
        #expect(snapshot.mode == 5)
        #expect(snapshot.timestamp == 5_000_123_456_789)
        #expect(snapshot.sequence == word, "the whole word identifies the transition")
    }

    @Test func theSequenceKeepsItsLowSixteenBits() {
        #expect(
            PackedActivity.pack(sequence: 0x1_0003, phase: .entry) == PackedActivity.pack(sequence: 3, phase: .entry))
        #expect(PackedActivity.pack(sequence: 0xFFFF, phase: .entry) >> 8 == 0xFFFF)
    }

    @Test func consecutivePublicationsDiffer() {
        let first = PackedActivity.pack(sequence: 1, phase: .beforeSources)
        let second = PackedActivity.pack(sequence: 2, phase: .beforeSources)
        #expect(first != second)
        #expect(PackedActivity.unpack(first, timestamp: 1) != PackedActivity.unpack(second, timestamp: 1))
    }

    @Test func zeroIsTheInitialState() {
        #expect(PackedActivity.unpack(0, timestamp: 123) == .initial)
    }
}
