// The `--fps` plumbing that is pure: the tick ring between the main thread and the watcher, and the
// settings as they travel in the environment.
import Foundation
import Testing

@testable import StallwatchCore

@Suite struct FrameTickRingTests {
    @Test func drainsInOrderAndOnlyOnce() {
        let ring = FrameTickRing(capacity: 8)
        for time in [10, 20, 30] as [UInt64] { #expect(ring.append(time)) }
        #expect(ring.drain() == [10, 20, 30])
        #expect(ring.drain() == [])
    }

    @Test func wrapsAroundItsSlots() {
        let ring = FrameTickRing(capacity: 4)
        var expected: [UInt64] = []
        for round in 0..<5 {
            let times = (0..<3).map { UInt64(round * 10 + $0) }
            for time in times { ring.append(time) }
            expected = times
            #expect(ring.drain() == expected)
        }
    }

    /// A full ring keeps the ticks the watcher has not read and counts the ones it had to drop.
    @Test func fullRingDropsNewTicksAndCountsThem() {
        let ring = FrameTickRing(capacity: 4)
        for time in 1...6 as ClosedRange<UInt64> { ring.append(time) }
        #expect(ring.overflowCount == 2)
        #expect(ring.drain() == [1, 2, 3, 4])
        #expect(ring.append(7))
        #expect(ring.drain() == [7])
    }

    @Test func capacityIsAPowerOfTwo() {
        #expect(FrameTickRing(capacity: 5).capacity == 8)
        #expect(FrameTickRing().capacity == 1024)
    }

    /// One thread appends while another drains: every tick arrives once, in order.
    @Test func producerAndConsumerOnTwoThreads() {
        let ring = FrameTickRing(capacity: 64)
        let count: UInt64 = 50_000
        let producer = Thread {
            var time: UInt64 = 1
            while time <= count {
                if ring.append(time) { time += 1 }
            }
        }
        producer.start()
        var received: [UInt64] = []
        while received.count < Int(count) { received += ring.drain() }
        #expect(received == Array(1...count))
    }
}

@Suite struct FrameRateSettingsTests {
    @Test func absentWithoutTheFlag() {
        #expect(FrameRateMonitor.Configuration(environment: [:]) == nil)
        #expect(FrameRateMonitor.Configuration(environment: [AgentEnvironment.fps: "0"]) == nil)
    }

    @Test func roundTripsThroughTheEnvironment() {
        var configuration = FrameRateMonitor.Configuration()
        configuration.maxFrameInterval = 80_000_000
        configuration.powFactor = 2.25
        #expect(FrameRateMonitor.Configuration(environment: configuration.environment) == configuration)
    }

    /// The agent never refuses over a bad setting: it keeps the default.
    @Test func badValuesKeepTheDefaults() {
        let configuration = FrameRateMonitor.Configuration(environment: [
            AgentEnvironment.fps: "1", AgentEnvironment.fpsMaxFrameNanoseconds: "1000",
            AgentEnvironment.fpsPowFactor: "nan",
        ])
        #expect(configuration == FrameRateMonitor.Configuration())
    }
}
