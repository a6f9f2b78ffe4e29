// Building a stall's report from its readings: capture method, thread states, CPU share, unfinished stalls.
import Testing

@testable import StallwatchCore

@Suite struct StallAssemblerTests {
    let onset = StallOnset(
        identifier: 4, phase: .afterWaiting, start: 1_000_000_000, detectedAt: 1_240_000_000, sequence: 9)

    func assembler(method: CaptureMethod = .ptrace) -> StallAssembler {
        StallAssembler(
            onset: onset, pid: 42, tid: 43, processName: "Daemon",
            settings: WatchSettings(thresholdNanoseconds: 80_000_000, count: 3), captureMethod: method)
    }

    /// A sample whose stack ends before the thread's start says why; one cut by --max-frames says so in its
    /// truncation instead, and a whole one says nothing.
    @Test func samplesCutShortSaySo() {
        func frame(_ symbol: String) -> Frame {
            Frame(address: 0x1000, image: "/app/Daemon", offset: 0, symbol: symbol)
        }
        var stall = assembler()
        stall.add(frames: [frame("work"), frame("main"), frame("_start")], capturedAt: 1)
        stall.add(frames: [frame("work"), frame("helper")], capturedAt: 2)
        stall.add(frames: [frame("work"), frame("helper")], capturedAt: 3, unwindError: -7)
        let uncounted = StackTruncation(omittedFrames: nil, resumesAt: 2, maxFrames: 2)
        stall.add(frames: [frame("work"), frame("helper")], capturedAt: 4, truncation: uncounted)
        let samples = stall.report.samples
        #expect(samples[0].cutShort == nil)
        #expect(samples[1].cutShort?.contains("cut short after helper") == true)
        #expect(samples[2].cutShort?.contains("bad frame (-7)") == true)
        #expect(samples[3].cutShort == nil && samples[3].truncation == uncounted)
    }

    @Test func theReportStartsFromTheOnsetAndSettings() {
        let report = assembler().report
        #expect(report.identifier == 4 && report.pid == 42 && report.tid == 43)
        #expect(report.start == 1_000_000_000 && report.detectedAt == 1_240_000_000 && report.end == nil)
        #expect(report.thresholdNanoseconds == 80_000_000 && report.count == 3)
        #expect(report.captureMethod == .ptrace)
    }

    @Test func cpuShareRunsFromDetectionToTheStallsEndNotToNow() {
        var stall = assembler()
        stall.startCPUClock(cpu: 5_000_000_000, now: 1_240_000_000)
        stall.end(at: 1_440_000_000)
        // 150 ms of CPU in the 200 ms from detection to the end; read 300 ms later, which must not count.
        let finished = stall.finished(cpuNow: 5_150_000_000, now: 1_740_000_000)
        #expect(finished.threadActivity?.cpuPercent == 75)
        #expect(finished.duration == 440_000_000)
    }

    @Test func tooShortToTimeGivesNoCPUShare() {
        var stall = assembler()
        stall.startCPUClock(cpu: 0, now: 1_240_000_000)
        stall.end(at: 1_280_000_000)
        #expect(stall.finished(cpuNow: 40_000_000, now: 1_300_000_000).threadActivity?.cpuPercent == nil)
    }

    @Test func samplesTakeTheStateReadBeforeThemAndRestartedCallsKeepTheirName() {
        var stall = assembler()
        stall.noteState(ThreadState(state: "S", syscall: "nanosleep"))
        stall.add(frames: [], capturedAt: 1_240_000_000, stoppedNanoseconds: 60_000)
        stall.noteState(ThreadState(state: "S", syscall: "restart_syscall"))
        stall.add(frames: [], capturedAt: 1_320_000_000)
        let states = stall.report.samples.map(\.threadState?.syscall)
        #expect(states == ["nanosleep", "nanosleep"])
        #expect(stall.finished(cpuNow: nil, now: 1_400_000_000).threadActivity?.blockedOn == .sleep)
    }

    @Test func aFailedFirstCaptureLeavesNoMethodALaterOneKeepsIt() {
        var failed = assembler()
        failed.noteCaptureFailure("the thread was gone")
        #expect(failed.report.captureMethod == .none && failed.report.captureNote == "the thread was gone")

        var later = assembler()
        later.add(frames: [], capturedAt: 1_240_000_000)
        later.noteCaptureFailure("the process exited")
        #expect(later.report.captureMethod == .ptrace)
    }

    @Test func signalFallbackSaysWhyAndAgentErrorsAddToIt() {
        var stall = assembler()
        stall.fallBackToSignalCapture(reason: "ptrace was not permitted")
        #expect(stall.report.captureMethod == .signal)
        stall.noteCaptureFailure("no libunwind", keepingEarlierNote: true)
        #expect(stall.report.captureMethod == .none)
        let note = stall.report.captureNote ?? ""
        #expect(note.hasPrefix("ptrace was not permitted; captured in-process with a signal instead"))
        #expect(note.hasSuffix("; no libunwind"))
    }

    @Test func attachedStallsSayHowTheyWereSeen() {
        var stall = assembler()
        stall.note(attached: AttachedStall(mode: .external, resolutionNanoseconds: 80_000_000))
        #expect(stall.finished(cpuNow: nil, now: 2_000_000_000).attached?.resolutionNanoseconds == 80_000_000)
        #expect(AttachedStall(mode: .agent, resolutionNanoseconds: 80_000_000).resolutionNanoseconds == nil)
    }
}

@Suite struct WatchSettingsTests {
    @Test func defaultsAreTheCommandLinesDefaults() {
        let settings = WatchSettings()
        #expect(settings.thresholdNanoseconds == 80_000_000 && settings.count == 3 && settings.maxSamples == 10)
        #expect(settings.strategy == .auto && settings.frameRate == nil && settings.invalidSetting == nil)
    }

    @Test func theAgentsEnvironmentCarriesEverySetting() {
        var frameRate = FrameRateMonitor.Configuration()
        frameRate.powFactor = 2
        let settings = WatchSettings(
            thresholdNanoseconds: 50_000_000, count: 5, maxSamples: 20, strategy: .ping, frameRate: frameRate)
        let environment = settings.environment.compactMapValues { $0 }
        #expect(WatchSettings(environment: environment) == settings)
    }

    @Test func withoutFPSTheFrameTickVariablesAreRemoved() {
        let variables = WatchSettings().environment
        for name in FrameRateMonitor.Configuration.environmentNames {
            #expect(variables[name] == .some(nil), "\(name) must be removed, not left as the user set it")
        }
    }

    @Test func outOfRangeValuesAreNamedOrBroughtIntoRange() {
        #expect(WatchSettings(thresholdNanoseconds: 0).invalidSetting == "threshold must be positive")
        #expect(WatchSettings(count: 101).invalidSetting == "count must be between 1 and 100")
        #expect(WatchSettings(maxSamples: 0).invalidSetting == "maxSamples must be between 1 and 1000")
        let environment = [AgentEnvironment.maxSamples: "0", AgentEnvironment.count: "0"]
        #expect(WatchSettings(environment: environment).maxSamples == 1)
        #expect(WatchSettings(environment: environment).invalidSetting != nil)
    }

    @Test func theAttachRequestCarriesTheDetectionSettings() {
        let settings = WatchSettings(thresholdNanoseconds: 20_000_000, count: 2, maxSamples: 7)
        #expect(AttachRequest(settings: settings, collectorVersion: "x").settings == settings)
    }
}

/// An unfinished stall has one length, the one it had reached when the watch ended: the summary, the budget and
/// the reports all say the same (the summary said "0 ms stalled" while the budget said 3003 ms).
@Suite struct UnfinishedStallTests {
    func unfinished() -> StallReport {
        var stall = StallAssembler(
            onset: StallOnset(
                identifier: 1, phase: .afterWaiting, start: 1_000_000_000, detectedAt: 1_240_000_000, sequence: 1),
            pid: 1, tid: 1, processName: "d", settings: WatchSettings(), captureMethod: .ptrace)
        stall.watchEnded(at: 4_003_000_000)
        return stall.finished(cpuNow: nil, now: 4_003_000_000)
    }

    @Test func theSummaryAndTheBudgetCountTheSameLength() {
        let stall = unfinished()
        #expect(stall.duration == nil && stall.length() == 3_003_000_000)
        let summary = RunSummary(
            stalls: [stall], runNanoseconds: 5_000_000_000, watchedPids: [1], exitStatus: 0, warnings: [])
        #expect(summary.unfinishedCount == 1)
        #expect(summary.totalStallNanoseconds == 3_003_000_000 && summary.longestStallNanoseconds == 3_003_000_000)
        let budget = StallBudget(maxStall: 1_000_000_000)
        let verdict = budget.evaluate([stall], endOfRun: 9_000_000_000)
        #expect(verdict.isBroken)
        #expect(verdict.violations.first?.contains("3003 ms") == true, "\(verdict.violations)")
    }

    @Test func aStallEndedBeforeTheWatchEndedKeepsItsDuration() {
        var stall = StallAssembler(
            onset: StallOnset(identifier: 1, phase: .afterWaiting, start: 0, detectedAt: 240, sequence: 1), pid: 1,
            tid: 1, processName: "d", settings: WatchSettings(), captureMethod: .ptrace)
        stall.end(at: 500)
        stall.watchEnded(at: 9_000)
        #expect(stall.report.watchedUntil == nil && stall.report.length() == 500)
    }

    @Test func aThreadStoppedBySignalLowersTheConfidence() {
        var stall = report(samples: [stack(["A.run()"]), stack(["A.run()"])])
        #expect(stall.confidenceNote == nil)
        stall.samples[1].threadState = ThreadState(state: "T")
        #expect(stall.confidenceNote?.contains("SIGSTOP") == true)
        stall.samples[1].threadState = ThreadState(state: "t")
        #expect(stall.confidenceNote == nil, "t is stallwatch's own ptrace stop")
    }
}
