// The one-word encoding of run-loop state: phase and mode below the board's stamp (the stamp itself, and its
// wrap-around, are the C board's: ActivityBoardTests).
import Testing

@testable import StallwatchCore

@Suite struct PackedActivityTests {
    @Test(arguments: LoopPhase.allCases.filter { $0 != .notStarted })
    func roundTripsPhaseAndMode(phase: LoopPhase) {
        let word = PackedActivity.pack(phase: phase, mode: 5) | 123 << 8
        let snapshot = PackedActivity.unpack(word, timestamp: 5_000_123_456_789)
        #expect(snapshot.phase == phase)
        #expect(snapshot.mode == 5)
        #expect(snapshot.timestamp == 5_000_123_456_789)
        #expect(snapshot.sequence == word, "the whole word identifies the transition")
    }

    @Test func theModeKeepsItsLowFourBits() {
        #expect(PackedActivity.pack(phase: .entry, mode: 0x13) == PackedActivity.pack(phase: .entry, mode: 3))
    }

    @Test func wordsWithDifferentStampsAreDifferentTransitions() {
        let first = PackedActivity.pack(phase: .beforeSources) | 1 << 8
        let second = PackedActivity.pack(phase: .beforeSources) | 2 << 8
        #expect(PackedActivity.unpack(first, timestamp: 1) != PackedActivity.unpack(second, timestamp: 1))
    }

    @Test func zeroIsTheInitialState() {
        #expect(PackedActivity.unpack(0, timestamp: 123) == .initial)
    }
}
