// Frame-rate readings and Matrix's dropped-frame records from tick times on a fake clock.
import Testing

@testable import StallwatchCore

@Suite struct FrameRateMonitorTests {
    let frame: UInt64 = 16_666_667

    @Test func smoothTicksReadSixtyFramesPerSecondAndNoDrops() {
        var monitor = FrameRateMonitor()
        var events: [FrameRateMonitor.Event] = []
        for index in 0...100 { events += monitor.tick(at: 1_000_000_000 + UInt64(index) * frame) }
        let readings = events.compactMap { if case .reading(let reading) = $0 { reading } else { nil } }
        #expect(readings.count == 1)
        #expect(abs((readings.first?.framesPerSecond ?? 0) - 60) < 0.5)
        #expect(readings.first?.dropped == 0)
        #expect(!events.contains { if case .drops = $0 { true } else { false } })
    }

    @Test func longFramesWeighMoreThanLinearly() {
        var monitor = FrameRateMonitor()
        _ = monitor.tick(at: 0)
        // One 100 ms frame: 50 ms × (100/50)^1.5 = 141 ms dropped.
        _ = monitor.tick(at: 100_000_000)
        let events = monitor.finish()
        let dropped = events.compactMap { if case .reading(let reading) = $0 { reading.dropped } else { nil } }.first
        #expect(dropped == 141_421_356)
    }

    @Test func aRunOfSlowFramesIsReportedWhenItEnds() {
        var monitor = FrameRateMonitor()
        var time: UInt64 = 0
        _ = monitor.tick(at: time)
        // Four 80 ms frames (320 ms, over maxDumpTimestamp 250 ms), then smooth frames.
        var events: [FrameRateMonitor.Event] = []
        for _ in 0..<4 {
            time += 80_000_000
            events += monitor.tick(at: time)
        }
        #expect(events.isEmpty, "the record is still open")
        time += frame
        events += monitor.tick(at: time)
        let records = events.compactMap { if case .drops(let record) = $0 { record } else { nil } }
        #expect(records.count == 1)
        #expect(records.first?.total == 320_000_000)
        #expect(records.first?.begin == 0)
    }

    @Test func shortHiccupsResetWithoutARecord() {
        var monitor = FrameRateMonitor()
        var time: UInt64 = 0
        var events: [FrameRateMonitor.Event] = []
        for _ in 0..<10 {
            time += 60_000_000  // one slow frame (under the 250 ms record threshold)
            events += monitor.tick(at: time)
            time += frame
            events += monitor.tick(at: time)
        }
        #expect(!events.contains { if case .drops = $0 { true } else { false } })
    }

    @Test func aLongFreezeIsReportedWithoutWaiting() {
        var monitor = FrameRateMonitor()
        _ = monitor.tick(at: 0)
        let events = monitor.tick(at: 2_500_000_000)  // over dumpInterval × dumpMaxCount = 2 s
        #expect(events.contains { if case .drops(let record) = $0 { record.total == 2_500_000_000 } else { false } })
    }
}

@Suite struct FrameRateDumpThresholdTests {
    @Test func oneSettingMovesBothDumpLimits() {
        var configuration = FrameRateMonitor.Configuration()
        configuration.dumpThreshold = 100_000_000
        var monitor = FrameRateMonitor(configuration: configuration)
        _ = monitor.tick(at: 0)
        // A 120 ms slow run, then a smooth frame: over 100 ms, so reported (the default 250 ms would not).
        _ = monitor.tick(at: 120_000_000)
        let ended = monitor.tick(at: 136_000_000)
        #expect(ended.contains { if case .drops = $0 { true } else { false } })
        // 900 ms of slow frames passes 8 × 100 ms: reported at once, without waiting for a smooth frame.
        let frozen = monitor.tick(at: 1_036_000_000)
        #expect(frozen.contains { if case .drops = $0 { true } else { false } })
    }

    @Test func theSettingTravelsThroughTheEnvironment() {
        var configuration = FrameRateMonitor.Configuration()
        configuration.dumpThreshold = 400_000_000
        let received = FrameRateMonitor.Configuration(environment: configuration.environment)
        #expect(received?.maxDumpTimestamp == 400_000_000)
        #expect(received?.dumpInterval == 400_000_000)
        #expect(received?.dumpMaxCount == 8)
    }
}
