// Where the main thread publishes run-loop transitions and the watcher reads them, without locks.
import CStallwatchAgentSupport
import StallwatchCore

/// The shared state between one thread's run-loop observers and the watcher (its own thread): the main thread's
/// (``shared``), or another loop thread's (``LoopThreads``).
///
/// Publishing is the loop thread's whole cost per observed transition: one reading of the board clock (the time-stamp
/// counter where the kernel keeps time by it, else `CLOCK_MONOTONIC`) and one relaxed store of a packed word (see
/// ``PackedActivity``), in C (`sw_board_publish`) so that no Swift runtime call can get onto it in any build. On
/// `CLOCK_MONOTONIC`, a loop thread's `beforeSources` (once per iteration, even on a loop that never sleeps) reads
/// the coarse clock (a few ns, 1–4 ms resolution), every other transition the precise one. Going to sleep also adds
/// the busy period just ended to a histogram.
final class ActivityBoard: Sendable {
    /// The main loop's, which the agent's C keeps for the life of the process (`sw_main_loop_board`): its run hooks
    /// reach it at a fixed address.
    static let shared = ActivityBoard(storage: sw_main_loop_board(), owned: false)

    /// Another thread's goes with the thread's watch (its ``LoopThread`` or ``ExecutorThread``), freed with this
    /// object once the thread exited or a later watch replaced it, so nothing publishes to it any more (a pool whose
    /// threads come and go would otherwise leak a board for each).
    nonisolated(unsafe) let storage: OpaquePointer
    private let owned: Bool

    /// A board of its own, freed with this object.
    convenience init(keepsBusyPeriods: Bool) {
        guard let storage = sw_board_create(keepsBusyPeriods ? 1 : 0) else {
            fatalError("stallwatch: out of memory for the activity board")
        }
        self.init(storage: storage, owned: true)
    }

    private init(storage: OpaquePointer, owned: Bool) {
        self.storage = storage
        self.owned = owned
    }

    deinit {
        if owned { sw_board_destroy(storage) }
    }

    /// Publishes a transition. The loop's own thread only (the observers run there).
    @inline(__always)
    func publish(_ phase: LoopPhase, mode: UInt8 = 0, precise: Bool) {
        sw_board_publish(storage, phase.rawValue, mode, precise ? 1 : 0)
    }

    /// The busy-period histogram so far (any thread); empty on a board that keeps none.
    func busyPeriodHistogram() -> LatencyHistogram {
        let counts = (0..<LatencyHistogram.bucketCount).map { sw_board_busy_periods(storage, Int32($0)) }
        var histogram = LatencyHistogram(counts: counts) ?? LatencyHistogram()
        let longest = sw_board_longest_busy_period(storage)
        // Read after the counters: a period counted is then no longer than this.
        if longest > 0 { histogram.exactMaximum = longest }
        return histogram
    }

    /// The latest transition, read on the watcher's thread.
    func read() -> ActivitySnapshot {
        var timestamp: UInt64 = 0
        let word = sw_board_read(storage, &timestamp)
        return PackedActivity.unpack(word, timestamp: timestamp)
    }

    /// Asks the loop thread to record the precise time of its next transition (the end of a stall).
    func armEndProbe() {
        sw_board_arm_end_probe(storage)
    }

    /// The time recorded by the end probe, if the main thread has moved since it was armed.
    func endProbe() -> UInt64? {
        let time = sw_board_end_probe(storage)
        return time == 0 ? nil : time
    }

    /// One reading for the detector, with the end probe re-armed exactly at it.
    ///
    /// The probe armed at the previous reading holds the first transition after it: the end of a stall declared on
    /// that reading. It is re-armed before reading again, and read again if the loop moved in between, so the new
    /// probe starts exactly at the new reading.
    func readWithEndProbe() -> (snapshot: ActivitySnapshot, firstTransitionSincePreviousReading: UInt64?) {
        let firstTransition = endProbe()
        var snapshot: ActivitySnapshot
        var attempts = 0
        repeat {
            armEndProbe()
            snapshot = read()
            attempts += 1
        } while endProbe() != nil && attempts < 100
        return (snapshot, firstTransition)
    }
}
