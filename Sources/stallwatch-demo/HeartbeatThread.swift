// The `loop-thread` scenario: a resident thread with a run loop of its own, as the original design describes for
// heartbeats and audio, whose timer callback stalls it while the main run loop stays responsive.
import CStallwatchSystem
import Foundation
import StallwatchCore

/// Starts the `heartbeat` thread: `RunLoop.current` with a 100 ms timer, and one stalling callout per stall.
enum HeartbeatThread {
    static func start(_ timeline: StallTimeline) {
        let thread = Thread {
            _ = sw_set_thread_name(DemoScenario.loopThreadName)
            let loop = RunLoop.current
            let tick = Timer(fire: Date().addingTimeInterval(0.1), interval: 0.1, repeats: true) { _ in
                WorkResults.keep(UInt64(MonotonicInstant.now().nanoseconds & 0xff))
            }
            loop.add(tick, forMode: .default)
            for index in timeline.stallIndices {
                let stallTimer = Timer(fire: timeline.start(ofStall: index).date, interval: 0, repeats: false) { _ in
                    let stall = StallMeasurement(
                        scenario: .loopThread, index: index, duration: timeline.stallDuration,
                        thread: (DemoScenario.loopThreadName, sw_thread_id()))
                    WorkResults.keep(TelemetryUploader.uploadBatch(until: stall.deadline))
                    stall.finish()
                }
                loop.add(stallTimer, forMode: .default)
            }
            loop.run(until: timeline.end.date)
        }
        thread.start()
    }
}

enum TelemetryUploader {
    @inline(never)
    static func uploadBatch(until deadline: MonotonicInstant) -> UInt64 {
        compressBatch(until: deadline) &+ 1
    }

    /// FNV-1a over a counter until `deadline`.
    @inline(never)
    static func compressBatch(until deadline: MonotonicInstant) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var byte: UInt64 = 0
        repeat {
            for _ in 0..<262_144 {
                hash = (hash ^ (byte & 0xff)) &* 0x0000_0100_0000_01b3
                byte &+= 1
            }
        } while MonotonicInstant.now() < deadline
        return hash
    }
}
