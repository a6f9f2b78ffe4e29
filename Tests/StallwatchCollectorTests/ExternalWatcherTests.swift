// External mode's judgement of the main thread (idle or busy) and its stall timing, with fabricated /proc readings.

import StallwatchCore
import Testing

@testable import StallwatchCollector

@Suite struct ExternalClassificationTests {
    @Test(arguments: ["epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6"])
    func eventLoopWaitsAreIdle(syscall: String) {
        #expect(EventLoopReading(ThreadState(state: "S", syscall: syscall)) == .waiting)
    }

    @Test(arguments: ["futex", "nanosleep", "clock_nanosleep", "read", "recvfrom", "wait4", "syscall 999"])
    func otherWaitsAreBusy(syscall: String) {
        #expect(EventLoopReading(ThreadState(state: "S", syscall: syscall)) == .busy)
    }

    @Test func runningAndDiskWaitAreBusyStoppedIsNot() {
        #expect(EventLoopReading(ThreadState(state: "R")) == .busy)
        #expect(EventLoopReading(ThreadState(state: "D", syscall: "read")) == .busy)
        #expect(EventLoopReading(ThreadState(state: "T")) == .resting)
        #expect(EventLoopReading(ThreadState(state: "t")) == .resting)
    }

    @Test func waitChannelStandsInForAnUnreadableSyscall() {
        #expect(EventLoopReading(ThreadState(state: "S", waitChannel: "do_epoll_wait")) == .waiting)
        #expect(EventLoopReading(ThreadState(state: "S", waitChannel: "do_sys_poll")) == .waiting)
        #expect(EventLoopReading(ThreadState(state: "S", waitChannel: "futex_wait_queue")) == .busy)
        #expect(EventLoopReading(ThreadState(state: "S")) == .resting)
    }
}

@Suite struct ExternalWatcherTimingTests {
    let threshold: UInt64 = 80_000_000
    static let idle = ThreadState(state: "S", syscall: "epoll_wait")
    static let busy = ThreadState(state: "R")

    /// Feeds `readings` one threshold apart from `start`, and returns every message with the time it came at.
    func feed(_ readings: [ThreadState], count: Int = 3, maxSamples: Int = 10, start: UInt64 = 1_000_000_000) -> (
        [(UInt64, AgentMessage)], ExternalWatcher
    ) {
        let watcher = ExternalWatcher(pid: 42, threshold: threshold, count: count, maxSamples: maxSamples, now: start)
        var messages: [(UInt64, AgentMessage)] = []
        for (index, reading) in readings.enumerated() {
            let now = start + UInt64(index) * threshold
            messages += watcher.observe(reading, at: now).map { (now, $0) }
        }
        return (messages, watcher)
    }

    @Test func countBusySamplesMakeAStallTimedByMidpoints() throws {
        let readings = [Self.idle, Self.idle] + Array(repeating: Self.busy, count: 6) + [Self.idle]
        let (messages, watcher) = feed(readings)
        let start: UInt64 = 1_000_000_000
        #expect(messages.first.map { "\($0.1)" } == "\(AgentMessage.watching(pid: 42, tid: 42))")
        #expect(watcher.evidence.isEventLoop)
        // Busy from sample 2; idle at sample 8. The stall starts halfway between samples 1 and 2, ends halfway
        // between 7 and 8, and is declared at the third busy sample (sample 4).
        let began = try #require(
            messages.first { if case .stallBegan = $0.1 { true } else { false } })
        guard case .stallBegan(_, let tid, let onset) = began.1 else { return }
        #expect(tid == 42)
        #expect(began.0 == start + 4 * threshold)
        #expect(onset.start == start + threshold + threshold / 2)
        #expect(onset.detectedAt == start + 4 * threshold)
        let ended = try #require(messages.first { if case .stallEnded = $0.1 { true } else { false } })
        guard case .stallEnded(_, let identifier, let endedAt) = ended.1 else { return }
        #expect(identifier == onset.identifier)
        #expect(endedAt == start + 7 * threshold + threshold / 2)
        // One sample per busy reading after detection (samples 5, 6, 7).
        let samples = messages.filter { if case .stallSample = $0.1 { true } else { false } }
        #expect(samples.count == 3)
    }

    @Test func fewerBusySamplesThanCountAreNoStall() {
        let readings = [Self.idle, Self.busy, Self.busy, Self.idle, Self.busy, Self.busy, Self.idle]
        let (messages, _) = feed(readings)
        #expect(!messages.contains { if case .stallBegan = $0.1 { true } else { false } })
    }

    @Test func aThreadNeverSeenInItsWaitIsNoLoop() {
        // The false positive this rule fixes: a main thread parked in pthread_join or a futex for the whole run.
        let parked = ThreadState(state: "S", syscall: "futex")
        let (messages, watcher) = feed(Array(repeating: parked, count: 20))
        #expect(messages.isEmpty, "no watching, no stall: \(messages)")
        #expect(!watcher.evidence.isEventLoop)
        #expect(watcher.evidence.notWatchedReason.contains("in futex"))
    }

    @Test func busyAtTheFirstLookIsJudgedOnlyFromTheFirstWait() {
        // Busy before the first wait: not a loop yet, so no stall; the same stretch after a wait is one.
        let (before, _) = feed([Self.busy, Self.busy, Self.busy, Self.busy, Self.idle])
        #expect(!before.contains { if case .stallBegan = $0.1 { true } else { false } })
        #expect(before.contains { if case .watching = $0.1 { true } else { false } })
        let (after, _) = feed([Self.busy, Self.idle, Self.busy, Self.busy, Self.busy, Self.idle])
        #expect(after.contains { if case .stallBegan = $0.1 { true } else { false } })
    }

    @Test func aThreadThatExitsMidStallEndsItsStall() throws {
        let watcher = ExternalWatcher(
            pid: 42, tid: 45, threshold: threshold, count: 3, maxSamples: 10, now: 0,
            identifiers: StallIdentifiers(after: 1000))
        var messages: [AgentMessage] = []
        for (index, reading) in [Self.idle, Self.busy, Self.busy, Self.busy, Self.busy].enumerated() {
            messages += watcher.observe(reading, at: UInt64(index) * threshold)
        }
        let began = try #require(messages.first { if case .stallBegan = $0 { true } else { false } })
        guard case .stallBegan(_, let tid, let onset) = began else { return }
        #expect(tid == 45)
        #expect(onset.identifier == 1001, "numbered after the agent's")
        #expect(watcher.isStalled)
        let ended = watcher.gone(at: 5 * threshold)
        guard case .stallEnded(_, let identifier, let endedAt)? = ended.first else {
            Issue.record("no end: \(ended)")
            return
        }
        #expect(identifier == 1001)
        #expect(endedAt == 4 * threshold + threshold / 2)
        #expect(watcher.gone(at: 6 * threshold).isEmpty, "ended once")
    }

    @Test func samplesGoOnPastMaxSamplesLessOften() {
        // Detected at the third busy reading, then 9 more: moments 1, 2, 3 fill the 4 samples (with the one that
        // comes with stallBegan); from then on every second moment (4, 6, 8), the collector thinning what it keeps.
        let (messages, _) = feed([Self.idle] + Array(repeating: Self.busy, count: 12), maxSamples: 4)
        let samples = messages.filter { if case .stallSample = $0.1 { true } else { false } }
        #expect(samples.count == 6)
    }

    @Test func aCaptureInterruptedSleepStaysTheSameCall() {
        // ptrace interrupts nanosleep, which the kernel resumes as restart_syscall: still busy, not a new stretch.
        let sleeping = ThreadState(state: "S", syscall: "clock_nanosleep")
        let restarted = ThreadState(state: "S", syscall: "restart_syscall")
        let (messages, _) = feed([Self.idle, sleeping, sleeping, sleeping, restarted, restarted, Self.idle])
        let began = messages.filter { if case .stallBegan = $0.1 { true } else { false } }
        let ended = messages.filter { if case .stallEnded = $0.1 { true } else { false } }
        #expect(began.count == 1)
        #expect(ended.count == 1)
    }

    @Test func schedulesOneSampleAThresholdAndCatchesUpWithoutBursts() {
        let watcher = ExternalWatcher(pid: 42, threshold: threshold, count: 3, maxSamples: 10, now: 1000)
        #expect(watcher.nextWake == 1000)
        _ = watcher.step(now: 1000)
        #expect(watcher.nextWake == 1000 + threshold)
        _ = watcher.step(now: 1000 + 5 * threshold)
        #expect(watcher.nextWake == 1000 + 6 * threshold)
    }
}
