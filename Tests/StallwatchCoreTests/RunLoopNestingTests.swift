// Nested and pumped run loops on a fake clock: entry pushes, exit pops back to the outer loop's phase, and the
// detector judges what the model publishes.
import Testing

@testable import StallwatchCore

/// A main thread whose observers feed a ``RunLoopNesting`` and publish what it says, as the agent does.
private struct NestedLoop {
    var nesting = RunLoopNesting()
    var loop = FakeLoop()

    /// The observers report `activity` at `time` (ms); `mode` is the loop's mode, used by `entry`.
    mutating func activity(_ activity: RunLoopNesting.Activity, at time: UInt64, mode: UInt8 = 1) {
        if nesting.needsMode(for: activity) { nesting.resynchronize(mode: mode) }
        let state = nesting.apply(activity, mode: mode)
        loop.transition(state.phase, at: time)
        loop.snapshot.mode = state.mode
    }

    /// An outer loop entered at `time`, woken for a timer at `time + 10`.
    mutating func outerTimerCallout(at time: UInt64) {
        activity(.entry, at: time)
        activity(.beforeSources, at: time + 1)
        activity(.beforeWaiting, at: time + 2)
        activity(.sleeping, at: time + 3)
        activity(.afterWaiting, at: time + 10)
    }
}

@Suite struct RunLoopNestingTests {
    @Test func entryPushesAndExitPopsBackToTheOuterPhaseAndMode() {
        var nesting = RunLoopNesting()
        nesting.apply(.entry, mode: 1)
        nesting.apply(.afterWaiting)
        #expect(nesting.apply(.entry, mode: 2) == .init(phase: .entry, mode: 2))
        nesting.apply(.sleeping)
        #expect(nesting.depth == 2)
        #expect(nesting.apply(.exit) == .init(phase: .afterWaiting, mode: 1), "back in the outer loop's callout")
        #expect(nesting.apply(.exit) == .init(phase: .outsideLoop, mode: 0))
        #expect(nesting.depth == 0)
    }

    @Test func workAfterANestedLoopReturnsIsAStallFromTheNestedExit() {
        var thread = NestedLoop()
        thread.outerTimerCallout(at: 0)
        // The callout runs a responsive nested loop for 300 ms in mode 2 ...
        thread.activity(.entry, at: 20, mode: 2)
        var time: UInt64 = 20
        while time < 320 {
            thread.activity(.beforeWaiting, at: time + 1)
            thread.activity(.sleeping, at: time + 2)
            thread.activity(.afterWaiting, at: time + 20)
            time += 20
            thread.loop.watcherWakes(at: time + 5)
        }
        #expect(thread.loop.began.isEmpty, "a responsive nested loop is not a stall")
        // ... returns at 330, and the callout works on for 500 ms.
        thread.activity(.exit, at: 330, mode: 2)
        thread.loop.watcherWakes(at: 400)
        thread.loop.watcherWakes(at: 570)
        let onset = thread.loop.began.first
        #expect(onset?.start == 330 * FakeLoop.ms, "the stall starts when the nested loop returned")
        #expect(onset?.phase == .afterWaiting, "still in the outer loop's timer callout")
        #expect(onset?.modeIndex == 1, "in the outer loop's mode")
        thread.activity(.beforeSources, at: 830)
        thread.loop.watcherWakes(at: 840)
        #expect(thread.loop.ended.first?.1 == 830)
    }

    @Test func aPumpedLoopIsBusyBetweenCalls() {
        var thread = NestedLoop()
        thread.activity(.entry, at: 0)
        thread.activity(.sleeping, at: 1)
        thread.activity(.afterWaiting, at: 50)
        thread.activity(.exit, at: 51)
        thread.activity(.entry, at: 52)
        thread.activity(.sleeping, at: 53)
        thread.loop.watcherWakes(at: 400)
        #expect(thread.loop.began.isEmpty, "asleep in the pumped loop")
        thread.activity(.afterWaiting, at: 500)
        thread.activity(.exit, at: 501)
        thread.loop.watcherWakes(at: 741)
        let onset = thread.loop.began.first
        #expect(onset?.phase == .outsideLoop)
        #expect(onset?.start == 501 * FakeLoop.ms)
        #expect(onset?.modeIndex == nil, "no mode outside every loop")
        thread.activity(.entry, at: 1101)
        thread.loop.watcherWakes(at: 1110)
        #expect(thread.loop.ended.first?.1 == 1101)
    }

    @Test func beforeTheFirstEntryNothingIsBusy() {
        var thread = NestedLoop()
        thread.loop.watcherWakes(at: 1000)
        #expect(thread.loop.began.isEmpty)
        #expect(thread.nesting.state.phase == .notStarted)
    }

    @Test func aNestedEntryMissedIsRepairedFromTheCurrentMode() {
        var nesting = RunLoopNesting()
        nesting.apply(.entry, mode: 1)
        nesting.apply(.afterWaiting)
        // Observers reach mode 2 after its loop was entered: its first activity comes with no entry.
        nesting.resynchronize(mode: 2)
        #expect(nesting.apply(.sleeping) == .init(phase: .sleeping, mode: 2))
        #expect(nesting.apply(.exit) == .init(phase: .afterWaiting, mode: 1), "the outer callout resumes")
        // The same mode as on record: nothing was missed.
        nesting.resynchronize(mode: 1)
        #expect(nesting.depth == 1)
    }

    @Test func observersAddedInsideARunningLoopStartFromItsMode() {
        var nesting = RunLoopNesting()
        #expect(nesting.needsMode(for: .beforeSources))
        #expect(!nesting.needsMode(for: .entry))
        nesting.resynchronize(mode: 3)
        #expect(nesting.apply(.beforeSources) == .init(phase: .beforeSources, mode: 3))
        #expect(!nesting.needsMode(for: .afterWaiting))
        #expect(nesting.apply(.exit).phase == .outsideLoop)
    }

    @Test func anExitWithNoEntryOnRecordLeavesTheThreadOutside() {
        var nesting = RunLoopNesting()
        #expect(nesting.apply(.exit) == .init(phase: .outsideLoop, mode: 0))
        #expect(nesting.depth == 0)
    }

    /// The outer states live in a fixed stack: within it every exit restores its loop's state exactly; deeper loops
    /// still count, and restore the deepest state recorded.
    @Test func nestingDeeperThanTheRecordedStackStillUnwindsToOutside() {
        var nesting = RunLoopNesting()
        let deepest = RunLoopNesting.recordedDepth + 4
        for level in 1...deepest {
            nesting.apply(.entry, mode: UInt8(level % 15 + 1))
            nesting.apply(.afterWaiting)
        }
        #expect(nesting.depth == deepest)
        for level in stride(from: deepest, to: 1, by: -1) {
            let restored = nesting.apply(.exit)
            let outer = min(level - 1, RunLoopNesting.recordedDepth - 1)
            #expect(restored == .init(phase: .afterWaiting, mode: UInt8(outer % 15 + 1)), "leaving loop \(level)")
        }
        #expect(nesting.depth == 1)
        #expect(nesting.apply(.exit).phase == .outsideLoop)
        #expect(nesting.depth == 0)
    }

    @Test func aRunNeverEnteredIsUndoneToTheStateBeforeIt() {
        var nesting = RunLoopNesting()
        nesting.apply(.entry, mode: 1)
        #expect(nesting.cancelEntry() == .init(phase: .notStarted, mode: 0), "not outside a loop it never ran")
        #expect(nesting.depth == 0)
        nesting.apply(.entry, mode: 1)
        nesting.apply(.afterWaiting)
        nesting.apply(.entry, mode: 2)
        #expect(nesting.cancelEntry() == .init(phase: .afterWaiting, mode: 1), "back in the outer callout")
        #expect(nesting.depth == 1)
        #expect(nesting.apply(.exit).phase == .outsideLoop)
        #expect(nesting.cancelEntry().phase == .outsideLoop, "nothing to undo")
    }

    /// The agent's `CFRunLoopRunSpecific` keeps each run's outer state in its own frame: over any properly nested
    /// sequence of runs and moves, that gives the same states as the model's own stack.
    @Test func outerStatesKeptByTheCallerMatchTheModelsOwnStack() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var own = RunLoopNesting()
            var kept = RunLoopNesting()
            var outers: [UInt8] = []
            let moves: [RunLoopNesting.Activity] = [.beforeSources, .beforeWaiting, .sleeping, .afterWaiting]
            for _ in 0..<60 {
                let choice = Int.random(in: 0..<4, using: &generator)
                if choice == 0 && outers.count < RunLoopNesting.recordedDepth {
                    let mode = UInt8.random(in: 0...15, using: &generator)
                    let expected = own.apply(.entry, mode: mode)
                    let (state, outer) = kept.enterKeepingOuter(mode: mode)
                    #expect(state == expected)
                    outers.append(outer)
                } else if choice == 1, let outer = outers.popLast() {
                    #expect(kept.exit(to: outer) == own.apply(.exit))
                } else if !outers.isEmpty {
                    let move = moves.randomElement(using: &generator)!
                    #expect(kept.apply(move) == own.apply(move))
                }
                #expect(kept.state == own.state)
                #expect(kept.needsMode(for: .afterWaiting) == own.needsMode(for: .afterWaiting))
            }
        }
    }

    /// Kept by the caller, every level is restored exactly, however deep; the outermost exit leaves the loops.
    @Test func outerStatesKeptByTheCallerUnwindExactlyAtAnyDepth() {
        var nesting = RunLoopNesting()
        let deepest = RunLoopNesting.recordedDepth * 2
        var outers: [UInt8] = []
        for level in 1...deepest {
            outers.append(nesting.enterKeepingOuter(mode: UInt8(level % 15 + 1)).outer)
            nesting.apply(.afterWaiting)
        }
        for level in stride(from: deepest, to: 1, by: -1) {
            let restored = nesting.exit(to: outers.removeLast())
            #expect(restored == .init(phase: .afterWaiting, mode: UInt8((level - 1) % 15 + 1)), "leaving loop \(level)")
        }
        #expect(nesting.exit(to: outers.removeLast()) == .init(phase: .outsideLoop, mode: 0))
        // A run entered from between two runs (a pumped loop) also leaves to outside.
        let outer = nesting.enterKeepingOuter(mode: 3).outer
        #expect(nesting.exit(to: outer) == .init(phase: .outsideLoop, mode: 0))
    }

    @Test func aRunNeverEnteredIsUndoneToTheOuterStateTheCallerKept() {
        var nesting = RunLoopNesting()
        let first = nesting.enterKeepingOuter(mode: 1).outer
        #expect(nesting.cancelEntry(to: first) == .init(phase: .notStarted, mode: 0), "not outside a loop it never ran")
        let outer = nesting.enterKeepingOuter(mode: 1).outer
        nesting.apply(.afterWaiting)
        let nested = nesting.enterKeepingOuter(mode: 2).outer
        #expect(nesting.cancelEntry(to: nested) == .init(phase: .afterWaiting, mode: 1), "back in the outer callout")
        #expect(nesting.exit(to: outer).phase == .outsideLoop)
    }

    @Test func modeSurvivesTheOneWordEncoding() {
        let word = PackedActivity.pack(phase: .afterWaiting, mode: 13) | 9 << 8
        let snapshot = PackedActivity.unpack(word, timestamp: 7_000_000)
        #expect(snapshot.mode == 13)
        #expect(snapshot.phase == .afterWaiting)
        #expect(snapshot.timestamp == 7_000_000)
    }

    /// The state byte the C model keeps is the board word's low byte, `mode << 4 | phase`, as ``PackedActivity``
    /// reads it.
    @Test func theModelsStateIsTheWordsLowByte() {
        var nesting = RunLoopNesting()
        let state = nesting.apply(.entry, mode: 11)
        let word = PackedActivity.pack(phase: state.phase, mode: state.mode)
        #expect(word == UInt64(11 << 4 | Int(LoopPhase.entry.rawValue)))
        #expect(PackedActivity.unpack(word | 1 << 8, timestamp: 1).phase == .entry)
    }
}
