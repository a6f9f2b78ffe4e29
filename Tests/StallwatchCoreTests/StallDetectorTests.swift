// The stall rule on a fake clock: consecutive timeouts, idle loops, progress resets, stall ends.
import Testing

@testable import StallwatchCore

/// Drives a detector through a scripted run loop on a fake clock (milliseconds for readability).
struct FakeLoop {
    var detector = StallDetector(threshold: 80 * ms, count: 3)
    var sequence: UInt64 = 0
    var snapshot = ActivitySnapshot.initial
    var events: [StallDetector.Event] = []

    static let ms: UInt64 = 1_000_000

    /// The loop publishes a transition at `time` (ms).
    mutating func transition(_ phase: LoopPhase, at time: UInt64) {
        sequence += 1
        snapshot = ActivitySnapshot(sequence: sequence, phase: phase, timestamp: time * Self.ms)
    }

    /// The watcher wakes at `time` (ms) and reads the loop.
    mutating func watcherWakes(at time: UInt64, probe: UInt64? = nil) {
        events += detector.observe(snapshot, now: time * Self.ms, firstTransitionAfterOnset: probe.map { $0 * Self.ms })
    }

    var began: [StallOnset] { events.compactMap { if case .began(let onset) = $0 { onset } else { nil } } }
    var ended: [(StallOnset, UInt64)] {
        events.compactMap { if case .ended(let onset, let end) = $0 { (onset, end / Self.ms) } else { nil } }
    }
}

@Suite struct StallDetectorTests {
    @Test func busyLoopStallsAfterCountConsecutiveTimeouts() {
        var loop = FakeLoop()
        loop.transition(.afterWaiting, at: 1000)
        loop.watcherWakes(at: 1080)
        loop.watcherWakes(at: 1160)
        #expect(loop.began.isEmpty, "two timeouts are not a stall")
        loop.watcherWakes(at: 1239)
        #expect(loop.began.isEmpty, "just short of three timeouts")
        loop.watcherWakes(at: 1240)
        #expect(loop.began.count == 1)
        #expect(loop.began.first?.start == 1000 * FakeLoop.ms)
        #expect(loop.began.first?.phase == .afterWaiting)
        #expect(loop.began.first?.detectedAt == 1240 * FakeLoop.ms)
    }

    @Test(arguments: [LoopPhase.afterWaiting, .beforeSources, .beforeWaiting, .entry])
    func everyBusyPhaseCounts(phase: LoopPhase) {
        var loop = FakeLoop()
        loop.transition(phase, at: 0)
        loop.watcherWakes(at: 500)
        #expect(loop.began.count == 1)
    }

    @Test(arguments: [LoopPhase.sleeping, .exit, .notStarted])
    func idleLoopNeverStalls(phase: LoopPhase) {
        var loop = FakeLoop()
        loop.transition(phase, at: 0)
        for tick in 1...1000 { loop.watcherWakes(at: UInt64(tick) * 80) }
        #expect(loop.events.isEmpty)
    }

    @Test func progressResetsTheCount() {
        var loop = FakeLoop()
        for step in 0..<20 {
            // Busy for 200 ms at a time (2 timeouts), then a transition: never 3 in a row.
            loop.transition(.beforeSources, at: UInt64(step) * 200)
            loop.watcherWakes(at: UInt64(step) * 200 + 80)
            loop.watcherWakes(at: UInt64(step) * 200 + 160)
        }
        loop.watcherWakes(at: 4000 - 200 + 199)
        #expect(loop.began.isEmpty)
    }

    @Test func stallEndsAtTheFirstTransitionAfterIt() {
        var loop = FakeLoop()
        loop.transition(.afterWaiting, at: 100)
        loop.watcherWakes(at: 340)
        #expect(loop.began.count == 1)
        loop.watcherWakes(at: 420)
        #expect(loop.ended.isEmpty, "still stalled")
        // The loop moves at 700 and again at 705; the watcher reads at 740 and sees only the last one.
        loop.transition(.beforeSources, at: 700)
        loop.transition(.sleeping, at: 705)
        loop.watcherWakes(at: 740, probe: 700)
        #expect(loop.ended.count == 1)
        #expect(loop.ended.first?.1 == 700)
        #expect(loop.ended.first?.0.identifier == 1)
    }

    @Test func withoutAProbeTheEndIsTheLatestTransition() {
        var loop = FakeLoop()
        loop.transition(.afterWaiting, at: 0)
        loop.watcherWakes(at: 300)
        loop.transition(.sleeping, at: 612)
        loop.watcherWakes(at: 620)
        #expect(loop.ended.first?.1 == 612)
    }

    @Test func oneStallIsReportedOnceHoweverLongItLasts() {
        var loop = FakeLoop()
        loop.transition(.afterWaiting, at: 0)
        for tick in 3...200 { loop.watcherWakes(at: UInt64(tick) * 80) }
        #expect(loop.began.count == 1)
    }

    @Test func laterStallsGetNewIdentifiers() {
        var loop = FakeLoop()
        loop.transition(.afterWaiting, at: 0)
        loop.watcherWakes(at: 300)
        loop.transition(.sleeping, at: 400)
        loop.watcherWakes(at: 410, probe: 400)
        loop.transition(.afterWaiting, at: 1000)
        loop.watcherWakes(at: 1300)
        #expect(loop.began.map(\.identifier) == [1, 2])
        #expect(loop.ended.count == 1)
    }

    @Test func watcherSleepsUntilAStallIsDue() {
        var loop = FakeLoop()
        loop.transition(.afterWaiting, at: 1000)
        loop.watcherWakes(at: 1010)
        #expect(loop.detector.nextWake(after: 1010 * FakeLoop.ms) == 1240 * FakeLoop.ms)
        loop.transition(.sleeping, at: 1020)
        loop.watcherWakes(at: 1030)
        #expect(loop.detector.nextWake(after: 1030 * FakeLoop.ms) == 1110 * FakeLoop.ms, "idle: poll every threshold")
    }

    @Test func countOfOneStallsAfterOneThreshold() {
        var detector = StallDetector(threshold: 50, count: 1)
        let events = detector.observe(ActivitySnapshot(sequence: 1, phase: .beforeSources, timestamp: 100), now: 150)
        #expect(events.count == 1)
    }
}

/// The ping strategy on a fake clock (milliseconds for readability).
@Suite struct PingDetectorTests {
    let ms: UInt64 = 1_000_000

    func answer(_ sequence: UInt64, at time: UInt64, thread: Int32 = 77) -> PingDetector.Answer {
        PingDetector.Answer(sequence: sequence, time: time * ms, thread: thread)
    }

    @Test func unansweredPingsCountOnlyOnceTheQueueHasBeenServed() {
        // Before the first answer the program may still be setting up: a silent queue is not a stall.
        var detector = PingDetector(threshold: 80 * ms, count: 3)
        #expect(detector.observe(nil, now: 0).post == 1)
        #expect(detector.observe(nil, now: 5_000 * ms).events.isEmpty)
        #expect(detector.servingThread == nil)
    }

    @Test func pingUnansweredForCountThresholdsIsAStallThatEndsWhenAnswered() {
        var detector = PingDetector(threshold: 80 * ms, count: 3)
        _ = detector.observe(nil, now: 0)  // posts ping 1
        let second = detector.observe(answer(1, at: 2), now: 80 * ms)  // answered; posts ping 2 at 80
        #expect(second.post == 2)
        #expect(detector.servingThread == 77)
        #expect(detector.observe(nil, now: 300 * ms).events.isEmpty, "220 ms unanswered: not yet")
        let began = detector.observe(nil, now: 320 * ms).events
        #expect(
            began == [
                .began(StallOnset(identifier: 1, phase: .mainQueue, start: 80 * ms, detectedAt: 320 * ms, sequence: 2))
            ])
        #expect(detector.observe(nil, now: 400 * ms).events.isEmpty, "one stall, reported once")
        let ended = detector.observe(answer(2, at: 650), now: 700 * ms)
        #expect(ended.events.count == 1)
        if case .ended(_, let end)? = ended.events.first { #expect(end == 650 * ms) }
        #expect(ended.post == 3, "pinging resumes")
    }

    @Test func promptAnswersNeverStall() {
        var detector = PingDetector(threshold: 80 * ms, count: 3)
        var events: [StallDetector.Event] = []
        var sequence: UInt64 = 0
        for tick in 0..<100 {
            let now = UInt64(tick) * 80 * ms
            let result = detector.observe(sequence == 0 ? nil : answer(sequence, at: now / ms - 1), now: now)
            events += result.events
            if let posted = result.post { sequence = posted }
        }
        #expect(events.isEmpty)
    }

    @Test func watcherWakesWhenTheOutstandingPingBecomesAStall() {
        var detector = PingDetector(threshold: 80 * ms, count: 3)
        _ = detector.observe(nil, now: 0)
        _ = detector.observe(answer(1, at: 1), now: 10 * ms)  // ping 2 posted at 10 ms
        #expect(detector.nextWake(after: 20 * ms) == 100 * ms, "no later than one threshold")
        #expect(detector.nextWake(after: 200 * ms) == 250 * ms, "exactly when due")
    }
}
