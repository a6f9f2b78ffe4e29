// The scenarios whose main thread runs its loop in shapes other than one `run(until:)`: a loop nested in a
// callout that keeps working when it returns, and a loop the main thread pumps itself.
import Foundation

extension Scenario {
    /// How long each `nested-then-stall` callout runs its nested loop before it stalls.
    static let nestedLoopLength: Duration = .milliseconds(300)

    /// `nested-then-stall`: each stall's timer runs a responsive nested loop, then works in the same callout.
    ///
    /// Odd stalls nest in a private mode (a modal session's), even ones in the default mode, the two ways a
    /// callout runs its loop again.
    func installNestedThenStall(_ timeline: StallTimeline) {
        // Keeps the default mode non-empty, so a nested run in it waits instead of returning at once.
        MainRunLoop.addTimer(firingAt: timeline.origin, repeatingEvery: .milliseconds(20)) { WorkResults.keep(2) }
        for index in timeline.stallIndices {
            MainRunLoop.addTimer(firingAt: timeline.start(ofStall: index)) {
                if index % 2 == 1 {
                    _ = ModalSession.runResponsiveSession(lasting: Self.nestedLoopLength)
                } else {
                    AutosaveCoordinator.waitForPendingEdits(for: Self.nestedLoopLength)
                }
                measureStall(index, timeline) { stall in
                    WorkResults.keep(AutosaveCoordinator.saveDraft(until: stall.deadline))
                }
            }
        }
    }
}

enum AutosaveCoordinator {
    /// Runs the main loop in the default mode for `length`, as code that waits for a reply does.
    @inline(never)
    static func waitForPendingEdits(for length: Duration) {
        let end = MonotonicInstant.now() + length
        while !end.hasPassed {
            _ = RunLoop.current.run(mode: .default, before: end.date)
        }
    }

    @inline(never)
    static func saveDraft(until deadline: MonotonicInstant) -> UInt64 {
        writeSnapshot(until: deadline) &+ 3
    }

    /// Compresses a synthetic draft until `deadline`: the stall after the nested loop returned.
    @inline(never)
    static func writeSnapshot(until deadline: MonotonicInstant) -> UInt64 {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        repeat {
            for _ in 0..<262_144 {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
            }
        } while !deadline.hasPassed
        return state
    }
}

/// `pump-loop`: the keep-alive pattern, `while running { RunLoop.current.run(mode:before:) }`.
enum PumpLoop {
    /// How long one call to the loop may wait.
    static let slice: Duration = .milliseconds(50)
    /// The work after the last call: the program leaving its loop for good, not a stall.
    static let shutdown: Duration = .milliseconds(400)

    /// Pumps the main loop until the timeline ends, doing each due stall's work between two calls, then shuts
    /// down.
    static func run(_ timeline: StallTimeline) {
        // A mode with nothing in it makes `run(mode:before:)` return at once: keep a timer in it.
        MainRunLoop.addTimer(firingAt: timeline.origin, repeatingEvery: .milliseconds(250)) { WorkResults.keep(4) }
        var next = timeline.stallIndices.lowerBound
        while !timeline.end.hasPassed {
            let until = min(timeline.end, .now() + slice)
            _ = RunLoop.current.run(mode: .default, before: until.date)
            if timeline.stallIndices.contains(next), timeline.start(ofStall: next).hasPassed {
                Scenario.pumpLoop.measureStall(next, timeline) { stall in
                    WorkResults.keep(FeedRefresher.refresh(until: stall.deadline))
                }
                next += 1
            }
        }
        WorkResults.keep(FeedRefresher.flushCaches(until: .now() + shutdown))
    }
}

enum FeedRefresher {
    @inline(never)
    static func refresh(until deadline: MonotonicInstant) -> UInt64 {
        rebuildFeed(until: deadline) ^ 0x33
    }

    /// Ranks a synthetic feed until `deadline`: the stall between two calls to the loop.
    @inline(never)
    static func rebuildFeed(until deadline: MonotonicInstant) -> UInt64 {
        var score: UInt64 = 11
        repeat {
            for item in 0..<UInt64(262_144) {
                score = score &* 6_364_136_223_846_793_005 &+ item
            }
        } while !deadline.hasPassed
        return score
    }

    /// The shutdown's work, after the main thread left its loop for good.
    @inline(never)
    static func flushCaches(until deadline: MonotonicInstant) -> UInt64 {
        var total: UInt64 = 0
        repeat {
            for item in 0..<UInt64(262_144) { total = total &+ item * item }
        } while !deadline.hasPassed
        return total
    }
}
