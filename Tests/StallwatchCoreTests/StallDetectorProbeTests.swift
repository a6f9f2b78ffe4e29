// The stall rule for a loop that publishes only some transitions and is probed for progress, on a fake clock.
import Testing

@testable import StallwatchCore

/// A watcher and a main loop on one fake clock (microseconds): the watcher wakes when the detector asks, posts the
/// probes it wants, and the loop answers each a little later while it is responsive.
private struct ProbedLoop {
    static let us: UInt64 = 1000
    static let ms: UInt64 = 1_000_000
    var detector = StallDetector(threshold: 80 * ms, count: 3, probeInterval: 5 * ms)
    var snapshot = ActivitySnapshot.initial
    var events: [StallDetector.Event] = []
    var probesPosted: [UInt64] = []
    /// The loop answers a probe this long after it was posted.
    var answerDelay: UInt64 = 100 * us

    mutating func transition(_ phase: LoopPhase, at time: UInt64) {
        snapshot = ActivitySnapshot(sequence: snapshot.sequence + 1, phase: phase, timestamp: time)
    }

    /// Runs the watcher from `start` to `end`, waking only when the detector asks. The loop answers each probe
    /// `answerDelay` after it was posted, or, when it is `stuck` then, the moment the stuck callout returns; the
    /// watcher reads the answer at its next wake (the end probe holds its time).
    mutating func run(from start: UInt64, to end: UInt64, stuck: Range<UInt64>? = nil) {
        var now = start
        var pendingAnswer: UInt64?
        while now < end {
            var firstTransition: UInt64?
            if let answer = pendingAnswer, answer <= now {
                transition(.beforeSources, at: answer)
                firstTransition = answer
                pendingAnswer = nil
            }
            events += detector.observe(snapshot, now: now, firstTransitionAfterOnset: firstTransition)
            if detector.wantsProbe(at: now) {
                detector.probePosted(at: now)
                probesPosted.append(now)
                if pendingAnswer == nil {
                    let answer = now + answerDelay
                    pendingAnswer = stuck.map { $0.contains(answer) ? $0.upperBound : answer } ?? answer
                }
            }
            let wake = detector.nextWake(after: now)
            #expect(wake > now, "the watcher never spins")
            now = wake
        }
    }

    var began: [StallOnset] { events.compactMap { if case .began(let onset) = $0 { onset } else { nil } } }
    var ended: [UInt64] { events.compactMap { if case .ended(_, let end) = $0 { end } else { nil } } }
}

@Suite struct StallDetectorProbeTests {
    @Test func aLoopThatAnswersItsProbesIsNeverReported() {
        var loop = ProbedLoop()
        loop.transition(.afterWaiting, at: 0)
        loop.run(from: 1, to: 3000 * ProbedLoop.ms)
        #expect(loop.began.isEmpty)
        // About one probe per interval: the watcher wakes a few hundred times a second, not more.
        #expect(loop.probesPosted.count > 500 && loop.probesPosted.count < 700, "\(loop.probesPosted.count) probes")
    }

    @Test func aStallIsFoundToWithinOneIntervalAndEndsExactly() throws {
        var loop = ProbedLoop()
        let stallStart = 1000 * ProbedLoop.ms + 1234 * ProbedLoop.us
        let stallEnd = stallStart + 500 * ProbedLoop.ms
        loop.transition(.afterWaiting, at: 0)
        loop.run(from: 1, to: 2000 * ProbedLoop.ms, stuck: stallStart..<stallEnd)
        let onset = try #require(loop.began.first)
        #expect(loop.began.count == 1)
        #expect(onset.start <= stallStart && onset.start >= stallStart - 5 * ProbedLoop.ms - loop.answerDelay)
        #expect(onset.detectedAt >= onset.start + 240 * ProbedLoop.ms)
        #expect(onset.detectedAt <= stallStart + 241 * ProbedLoop.ms)
        #expect(loop.ended == [stallEnd])
    }

    @Test func aLateWatcherPostsAProbeBeforeJudging() {
        var detector = StallDetector(threshold: 80 * ProbedLoop.ms, count: 3, probeInterval: 5 * ProbedLoop.ms)
        let reading = ActivitySnapshot(sequence: 1, phase: .afterWaiting, timestamp: 0)
        // The watcher wakes a second late: the loop may have been busy with unpublished progress all along.
        #expect(detector.observe(reading, now: 1000 * ProbedLoop.ms).isEmpty)
        #expect(detector.wantsProbe(at: 1000 * ProbedLoop.ms))
        detector.probePosted(at: 1000 * ProbedLoop.ms)
        #expect(detector.nextWake(after: 1000 * ProbedLoop.ms) == 1005 * ProbedLoop.ms, "to read the answer")
        #expect(detector.observe(reading, now: 1005 * ProbedLoop.ms).isEmpty)
        #expect(!detector.wantsProbe(at: 1005 * ProbedLoop.ms), "one probe at a time")
        #expect(detector.nextWake(after: 1005 * ProbedLoop.ms) == 1155 * ProbedLoop.ms)
        #expect(detector.observe(reading, now: 1154 * ProbedLoop.ms).isEmpty, "the probe still has its chance")
        // Answered: progress, no stall.
        let answered = ActivitySnapshot(sequence: 2, phase: .beforeSources, timestamp: 1001 * ProbedLoop.ms)
        #expect(detector.observe(answered, now: 1155 * ProbedLoop.ms).isEmpty)
        #expect(detector.wantsProbe(at: 1155 * ProbedLoop.ms))
    }

    @Test func anUnansweredLateProbeStillFindsTheStallFromTheLastProgressSeen() throws {
        var detector = StallDetector(threshold: 80 * ProbedLoop.ms, count: 3, probeInterval: 5 * ProbedLoop.ms)
        let reading = ActivitySnapshot(sequence: 1, phase: .afterWaiting, timestamp: 0)
        _ = detector.observe(reading, now: 1000 * ProbedLoop.ms)
        detector.probePosted(at: 1000 * ProbedLoop.ms)
        let events = detector.observe(reading, now: 1155 * ProbedLoop.ms)
        guard case .began(let onset) = try #require(events.first) else {
            Issue.record("no stall: \(events)")
            return
        }
        #expect(onset.start == 0)
    }

    /// The watcher sleeps a threshold at a time while the loop sleeps: it sees a wake-up late, yet a stall in the
    /// first callout after it is declared at the stall's age, as when every transition was observed.
    @Test func aStallRightAfterAWakeUpTheWatcherSawLateIsDeclaredAtItsAge() throws {
        var detector = StallDetector(threshold: 80 * ProbedLoop.ms, count: 3, probeInterval: 5 * ProbedLoop.ms)
        _ = detector.observe(ActivitySnapshot(sequence: 1, phase: .sleeping, timestamp: 0), now: 0)
        #expect(detector.nextWake(after: 0) == 80 * ProbedLoop.ms)
        // Woken at 2 ms into a callout that never returns; the watcher looks at 80 ms.
        let woken = ActivitySnapshot(sequence: 2, phase: .afterWaiting, timestamp: 2 * ProbedLoop.ms)
        #expect(detector.observe(woken, now: 80 * ProbedLoop.ms).isEmpty)
        #expect(detector.wantsProbe(at: 80 * ProbedLoop.ms))
        detector.probePosted(at: 80 * ProbedLoop.ms)
        #expect(detector.nextWake(after: 80 * ProbedLoop.ms) == 85 * ProbedLoop.ms)
        #expect(detector.observe(woken, now: 85 * ProbedLoop.ms).isEmpty)
        #expect(detector.nextWake(after: 85 * ProbedLoop.ms) == 242 * ProbedLoop.ms)
        let events = detector.observe(woken, now: 242 * ProbedLoop.ms)
        guard case .began(let onset) = try #require(events.first) else {
            Issue.record("no stall: \(events)")
            return
        }
        #expect(onset.start == 2 * ProbedLoop.ms)
        #expect(onset.detectedAt == 242 * ProbedLoop.ms)
    }

    @Test(arguments: [LoopPhase.sleeping, .notStarted])
    func anIdleLoopIsNeverProbed(phase: LoopPhase) {
        var detector = StallDetector(threshold: 80 * ProbedLoop.ms, count: 3, probeInterval: 5 * ProbedLoop.ms)
        _ = detector.observe(ActivitySnapshot(sequence: 1, phase: phase, timestamp: 0), now: 1000 * ProbedLoop.ms)
        #expect(!detector.wantsProbe(at: 1000 * ProbedLoop.ms))
        #expect(detector.nextWake(after: 1000 * ProbedLoop.ms) == 1080 * ProbedLoop.ms)
    }

    @Test func theIntervalIsASixteenthOfTheThresholdWithinBounds() {
        #expect(StallDetector.probeInterval(forThreshold: 80 * ProbedLoop.ms) == 5 * ProbedLoop.ms)
        #expect(StallDetector.probeInterval(forThreshold: 32 * ProbedLoop.ms) == 2 * ProbedLoop.ms)
        #expect(StallDetector.probeInterval(forThreshold: 10 * ProbedLoop.ms) == 1 * ProbedLoop.ms)
        #expect(StallDetector.probeInterval(forThreshold: ProbedLoop.ms / 2) == ProbedLoop.ms / 2)
        #expect(StallDetector.probeInterval(forThreshold: 3_600_000 * ProbedLoop.ms) == 5 * ProbedLoop.ms)
    }
}
