// Reading a stall's samples: dominant frame, callout kind, fingerprint, thread verdict, confidence.
import Testing

@testable import StallwatchCore

/// A stack innermost first: `names` are application frames above a timer callout and `main`.
func stack(
    _ names: [String], callout: String = "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__",
    base: UInt64 = 0x1000
)
    -> [Frame]
{
    var frames = names.enumerated().map { index, name in
        Frame(address: base + UInt64(index) * 16, image: "/app/Daemon", symbol: name)
    }
    frames.append(Frame(address: 0x7f00_0000_0000, image: "/usr/lib/libFoundation.so", symbol: callout))
    frames.append(Frame(address: 0x7f00_0000_1000, image: "/usr/lib/libFoundation.so", symbol: "CFRunLoopRunSpecific"))
    frames.append(Frame(address: base + 0x900, image: "/app/Daemon", symbol: "main"))
    return frames
}

func report(samples: [[Frame]], start: UInt64 = 0, detectedAt: UInt64 = 240_000_000) -> StallReport {
    StallReport(
        identifier: 1, pid: 7, tid: 7, processName: "Daemon", phase: .afterWaiting, start: start, end: 700_000_000,
        detectedAt: detectedAt, thresholdNanoseconds: 80_000_000, count: 3, captureMethod: .ptrace,
        samples: samples.enumerated().map { Sample(frames: $1, capturedAt: 240_000_000 + UInt64($0) * 80_000_000) })
}

@Suite struct DominantFrameTests {
    @Test func longStepBeatsTheShortOneThatRanLast() {
        // A for most of the stall, then B: the classic detectors' single stack could show B.
        let a = stack(["Importer.parse()", "Importer.run()"])
        let b = stack(["Importer.index()", "Importer.run()"])
        let stall = report(samples: [a, a, a, b])
        #expect(stall.dominantFrame?.symbol == "Importer.parse()")
    }

    @Test func deepestFrameAmongTheMajorityWins() {
        // Leaves differ every time (no majority), but every sample is under Renderer.draw().
        let samples = (0..<5).map { stack(["Leaf\($0).work()", "Renderer.draw()", "App.tick()"]) }
        #expect(report(samples: samples).dominantFrame?.symbol == "Renderer.draw()")
    }

    @Test func oneSampleUsesItsInnermostApplicationFrame() {
        #expect(report(samples: [stack(["A.b()", "A.c()"])]).dominantFrame?.symbol == "A.b()")
    }
}

@Suite struct CalloutKindTests {
    @Test(arguments: [
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__", CalloutKind.timer),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION__", .source0),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION__", .source1),
        ("__CFRUNLOOP_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__", .mainQueue),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_A_BLOCK__", .performBlock),
        ("__CFRUNLOOP_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION__", .observer),
    ])
    func calloutFrameNamesTheKind(callout: String, kind: CalloutKind) {
        #expect(report(samples: [stack(["A.b()"], callout: callout)]).callout == kind)
    }

    @Test func innermostCalloutWinsInANestedRunLoop() {
        var frames = stack(["A.b()"], callout: "__CFRUNLOOP_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__")
        frames.append(
            Frame(
                address: 9, image: "/usr/lib/libFoundation.so",
                symbol: "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__"))
        #expect(CalloutKind(frames: frames) == .mainQueue)
    }

    @Test func noCalloutFrameNoKind() {
        #expect(CalloutKind(frames: [Frame(address: 1, image: "/app/x", symbol: "main")]) == nil)
    }
}

@Suite struct FingerprintTests {
    @Test func sameFunctionsSameFingerprintWhateverTheAddresses() {
        // A rebuild moves every address; the fingerprint is made of names.
        let before = report(samples: [stack(["Cache.load()", "App.start()"], base: 0x1000)])
        let after = report(samples: [stack(["Cache.load()", "App.start()"], base: 0x9_9000)])
        #expect(before.fingerprint == after.fingerprint)
        #expect(before.fingerprint.count == 16)
    }

    @Test func differentCulpritDifferentFingerprint() {
        let one = report(samples: [stack(["Cache.load()", "App.start()"])])
        let other = report(samples: [stack(["Cache.save()", "App.start()"])])
        #expect(one.fingerprint != other.fingerprint)
        let otherCallout = report(samples: [
            stack(["Cache.load()", "App.start()"], callout: "__CFRUNLOOP_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__")
        ])
        #expect(one.fingerprint != otherCallout.fingerprint)
    }
}

@Suite struct ConfidenceTests {
    @Test func punctualWatcherIsTrusted() {
        let stall = report(samples: [], start: 0, detectedAt: 241_000_000)
        #expect(stall.watcherLateness == 1_000_000)
        #expect(stall.confidenceNote == nil)
    }

    @Test func lateWatcherIsFlagged() {
        // Due at 240 ms; woke at 1.5 s, as when the process was stopped.
        let stall = report(samples: [], start: 0, detectedAt: 1_500_000_000)
        #expect(stall.watcherLateness == 1_260_000_000)
        #expect(stall.confidenceNote?.contains("1260 ms late") == true)
    }
}

@Suite struct ThreadActivityTests {
    @Test func runnableThreadIsCPUBoundEvenWhenStarved() {
        let running = Array(repeating: ThreadState(state: "R"), count: 5)
        let starved = ThreadActivity(cpuPercent: 40, states: running)
        #expect(starved?.verdict == .cpuBound)
        #expect(starved?.summary.contains("got only 40% of a CPU") == true)
    }

    @Test func cpuShareDecidesWithoutStates() {
        #expect(ThreadActivity(cpuPercent: 97, states: [])?.verdict == .cpuBound)
        #expect(ThreadActivity(cpuPercent: 50, states: [])?.verdict == .mixed)
        let blocked = ThreadActivity(cpuPercent: 1, states: [ThreadState(state: "S", syscall: "futex")])
        #expect(blocked?.summary == "blocked, waiting on a lock (futex) (1% CPU)")
        #expect(blocked?.verdict == .blocked)
        #expect(blocked?.blockedOn == .lock)
    }

    @Test func statesDecideWithoutCPUTime() {
        let sleeping = Array(repeating: ThreadState(state: "S", syscall: "clock_nanosleep"), count: 4)
        #expect(ThreadActivity(cpuPercent: nil, states: sleeping)?.blockedOn == .sleep)
        #expect(ThreadActivity(cpuPercent: nil, states: [ThreadState(state: "R")])?.verdict == .cpuBound)
        #expect(ThreadActivity(cpuPercent: nil, states: []) == nil)
    }

    @Test(arguments: [
        ("futex", WaitReason.lock), ("nanosleep", .sleep), ("clock_nanosleep", .sleep), ("read", .io),
        ("epoll_wait", .io), ("ppoll", .io), ("wait4", .child), ("mmap", .other),
    ])
    func syscallsMapToReasons(syscall: String, reason: WaitReason) {
        #expect(ThreadState(state: "S", syscall: syscall).waitReason == reason)
    }

    @Test func waitChannelStandsInForTheSyscall() {
        #expect(ThreadState(state: "S", waitChannel: "futex_wait_queue").waitReason == .lock)
        #expect(ThreadState(state: "S", waitChannel: "hrtimer_nanosleep").waitReason == .sleep)
        #expect(ThreadState(state: "S", waitChannel: "do_epoll_wait").waitReason == .io)
    }

    @Test func syscallNumbersHaveNames() {
        #expect(SyscallNames.name(202) == "futex")
        #expect(SyscallNames.name(230) == "clock_nanosleep")
        #expect(SyscallNames.name(9999) == "syscall 9999")
    }
}

@Suite struct RunSummaryTests {
    func stall(_ milliseconds: UInt64, culprit: String) -> StallReport {
        var stall = report(samples: [stack([culprit])])
        stall.end = milliseconds * 1_000_000
        return stall
    }

    @Test func percentilesAndTopCulprits() {
        let stalls = (1...20).map { stall(UInt64($0) * 100, culprit: $0 % 4 == 0 ? "Big.one()" : "Small.one()") }
        let summary = RunSummary(
            stalls: stalls, runNanoseconds: 60_000_000_000, watchedPids: [7], exitStatus: 0, warnings: [])
        #expect(summary.medianStallNanoseconds == 1_000_000_000)
        #expect(summary.p95StallNanoseconds == 1_900_000_000)
        #expect(summary.longestStallNanoseconds == 2_000_000_000)
        // Big.one(): 400+800+1200+1600+2000 = 6000 ms in 5; Small.one(): 21000 - 6000 = 15000 ms in 15.
        #expect(summary.topCulprits.map(\.symbol) == ["Small.one()", "Big.one()"])
        #expect(summary.topCulprits.first?.totalNanoseconds == 15_000_000_000)
        #expect(summary.topCulprits.last?.count == 5)
    }

    @Test func unfinishedStallsCountButHaveNoLength() {
        var open = stall(100, culprit: "A.b()")
        open.end = nil
        let summary = RunSummary(
            stalls: [open, stall(300, culprit: "A.b()")], runNanoseconds: 1, watchedPids: [], exitStatus: nil,
            warnings: [])
        #expect(summary.stallCount == 2)
        #expect(summary.unfinishedCount == 1)
        #expect(summary.totalStallNanoseconds == 300_000_000)
        #expect(summary.medianStallNanoseconds == 300_000_000)
    }
}

@Suite struct RestartedSyscallTests {
    @Test func restartedSleepKeepsItsName() {
        let first = ThreadState(state: "S", syscall: "clock_nanosleep", waitChannel: "hrtimer_nanosleep")
        let after = ThreadState(state: "S", syscall: "restart_syscall", waitChannel: "do_syscall_64")
        #expect(after.continuing(first).waitReason == .sleep)
        #expect(after.continuing(nil).syscall == "restart_syscall")
        #expect(first.continuing(after) == first)
    }
}
