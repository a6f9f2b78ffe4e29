// The realistic workload: a loop that sleeps and wakes for 1 kHz timers and main-queue blocks, each doing work.
//
// Nothing here saturates the loop: it does a steady amount of work, sleeps in between, and wakes thousands
// of times a second, each wake passing the observed transitions. Its throughput is measured per second of
// main-thread CPU (see `WorkloadResult.perCPUSecond`): wall-clock throughput would just be the offered rate.
import Foundation
import Synchronization

enum RealisticLoop {
    /// Two timers at 1 kHz each, half a millisecond apart.
    static let timerCount = 2
    static let timerInterval: UInt64 = 1_000_000
    /// A background thread posts one block to the main queue this often (2 kHz), like I/O completions arriving,
    /// a quarter of a millisecond after each timer: every callback has a wake-up of its own, in every run.
    static let blockInterval: UInt64 = 500_000
    static let blockPhase: UInt64 = 250_000
    /// Work per timer callback and per block: xorshift rounds, about 15 µs here.
    static let workRounds = 8_192

    /// Runs for `seconds`, or until `units` callbacks and blocks completed.
    static func run(seconds: Double, units: UInt64? = nil) -> WorkloadResult {
        let tally = Tally()
        // One origin for both schedules, so timers and blocks keep the same phase from run to run.
        let origin = MonotonicClock.now() + 2_000_000
        for index in 0..<timerCount {
            // Signed: on a slow machine (or under valgrind) the origin may already have passed.
            let offset =
                Double(Int64(bitPattern: origin &- MonotonicClock.now()))
                + Double(timerInterval * UInt64(index) / UInt64(timerCount))
            let timer = Timer(
                fire: Date(timeIntervalSinceNow: offset / 1e9), interval: Double(timerInterval) / 1e9, repeats: true
            ) { _ in
                WorkSink.keep(WorkUnit.perform(rounds: workRounds))
                tally.completed.add(1, ordering: .relaxed)
            }
            RunLoop.main.add(timer, forMode: .common)
        }
        let poster = Thread { postBlocks(from: origin + blockPhase, to: tally) }
        poster.name = "block-poster"
        poster.start()

        let result = WorkloadResult.measure {
            if let units {
                while tally.completed.load(ordering: .relaxed) < units {
                    RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
                }
            } else {
                RunLoop.main.run(until: Date(timeIntervalSinceNow: seconds))
            }
            return tally.completed.load(ordering: .relaxed)
        }
        tally.finished.store(true, ordering: .relaxed)
        return result
    }

    /// Posts one block every `blockInterval` from `start`, on an absolute schedule so the rate does not drift.
    private static func postBlocks(from start: UInt64, to tally: Tally) {
        var next = start
        while !tally.finished.load(ordering: .relaxed) {
            MonotonicClock.sleep(until: next)
            DispatchQueue.main.async {
                WorkSink.keep(WorkUnit.perform(rounds: workRounds))
                tally.completed.add(1, ordering: .relaxed)
            }
            next += blockInterval
        }
    }

    /// Counters shared by the main thread (callbacks, blocks) and the poster thread.
    private final class Tally: Sendable {
        let completed = Atomic<UInt64>(0)
        let finished = Atomic<Bool>(false)
    }
}
