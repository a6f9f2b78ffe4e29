// Sampling past --max-samples: fewer samples, thinned, always spanning the stall from detection to its end.
import Testing

@testable import StallwatchCore

@Suite struct SampleScheduleTests {
    /// The agent's decisions and the collector's thinning over `moments` moments: the moments of the kept samples.
    private func keptMoments(maxSamples: Int, moments: Int) -> (kept: [Int], schedule: SampleSchedule) {
        var schedule = SampleSchedule(maxSamples: maxSamples)
        var kept: [Int] = []
        for moment in 0..<moments where schedule.shouldSample(atMoment: moment) {
            kept.append(moment)
            kept = SampleSchedule.thin(kept, maxSamples: maxSamples)
        }
        return (kept, schedule)
    }

    @Test func underTheLimitEveryMomentIsSampled() {
        let (kept, schedule) = keptMoments(maxSamples: 10, moments: 7)
        #expect(kept == Array(0..<7))
        #expect(schedule.interval == 1)
    }

    /// The case: a 2.4 s stall at 80 ms × 3 offers a moment at 240 ms and every 80 ms to its end, 28 in all.
    @Test func aLongStallIsSampledFromDetectionToItsEnd() {
        let (kept, schedule) = keptMoments(maxSamples: 10, moments: 28)
        #expect(kept.count <= 10)
        #expect(kept.first == 0, "the detection sample stays")
        #expect(kept.last! >= 27 - schedule.interval, "the last kept sample is within one interval of the end")
        let gaps = Set(zip(kept, kept.dropFirst()).map { $1 - $0 })
        #expect(gaps == [schedule.interval], "evenly spread: \(kept)")
        #expect(kept.allSatisfy { $0 % schedule.interval == 0 }, "the agent's and the collector's rule agree")
    }

    @Test(arguments: [2, 3, 5, 10, 64])
    func neverMoreThanTheLimitAndAlwaysSpanning(maxSamples: Int) {
        for moments in 1...300 {
            let (kept, schedule) = keptMoments(maxSamples: maxSamples, moments: moments)
            #expect(kept.count <= maxSamples)
            #expect(kept.first == 0)
            #expect(kept.last! >= moments - 1 - schedule.interval, "\(moments) moments: \(kept)")
        }
    }

    @Test func oneSampleIsTheDetectionOne() {
        let (kept, _) = keptMoments(maxSamples: 1, moments: 50)
        #expect(kept == [0])
    }

    @Test func theAssemblerKeepsTheThinnedSamples() {
        let onset = StallOnset(identifier: 1, phase: .afterWaiting, start: 0, detectedAt: 240, sequence: 1)
        var settings = WatchSettings()
        settings.maxSamples = 4
        var assembler = StallAssembler(
            onset: onset, pid: 1, tid: 1, processName: "p", settings: settings, captureMethod: .ptrace)
        for moment in 0..<5 { assembler.add(frames: [], capturedAt: UInt64(240 + moment * 80)) }
        #expect(assembler.report.samples.map(\.capturedAt) == [240, 400, 560])
    }
}
