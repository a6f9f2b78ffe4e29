// Where the main thread publishes run-loop transitions and the watcher reads them, without locks.
import CStallwatchAgentSupport
import StallwatchCore
import Synchronization

/// The shared state between one thread's run-loop observers and the watcher (its own thread): the main thread's
/// (``shared``), or another loop thread's (``LoopThreads``).
///
/// Publishing is the main thread's whole cost per activity: one clock read and one relaxed store of a
/// packed word (see ``PackedActivity``). The hot activity, `beforeSources` (once per loop iteration, even
/// on a loop that never sleeps), reads the coarse clock (~6 ns, 4 ms resolution); the rare ones (waking,
/// sleeping, entry, exit) read the precise clock, whose ~28 ns vanish next to the syscall around them.
/// Going to sleep also adds the busy period just ended to a histogram: one more relaxed atomic add.
final class ActivityBoard: Sendable {
    static let shared = ActivityBoard(keepsBusyPeriods: true)

    private let word = Atomic<UInt64>(0)
    /// Set by the watcher once a stall is declared, so the next transition records its precise time.
    private let endProbeArmed = Atomic<Bool>(false)
    private let endProbeTime = Atomic<UInt64>(0)

    /// The loop thread's own state: the running sequence and the last timestamp (to keep stamps monotonic when the
    /// coarse clock lags the precise one).
    nonisolated(unsafe) private var sequence: UInt64 = 0
    nonisolated(unsafe) private var lastStamp: UInt64 = 0

    /// Busy periods (waking or entering to going to sleep), counted per ``LatencyHistogram`` bucket; the main loop's
    /// only (the summary's busy periods are the main run loop's). Only atomics are reached through the pointer, which
    /// is never freed: safe from any thread.
    nonisolated(unsafe) private let busyPeriods: UnsafeMutablePointer<Atomic<UInt64>>?
    /// The longest busy period so far, exactly (written by the loop thread only).
    private let longestBusyPeriod = Atomic<UInt64>(0)
    /// The loop thread's own state: when the current busy period began (0 while asleep).
    nonisolated(unsafe) private var busySince: UInt64 = 0

    init(keepsBusyPeriods: Bool) {
        guard keepsBusyPeriods else {
            busyPeriods = nil
            return
        }
        let counters = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: LatencyHistogram.bucketCount)
        for index in 0..<LatencyHistogram.bucketCount { (counters + index).initialize(to: Atomic(0)) }
        busyPeriods = counters
    }

    /// Publishes a transition. The loop's own thread only (the observers run there).
    @inline(__always)
    func publish(_ phase: LoopPhase, mode: UInt8 = 0, precise: Bool) {
        let now = precise ? sw_agent_now_ns() : sw_agent_coarse_now_ns()
        let stamp = max(now, lastStamp)
        lastStamp = stamp
        // A busy period runs from waking (or entering, or coming back from a loop) to going to sleep; both ends
        // read the precise clock.
        if let busyPeriods {
            switch phase {
            case .sleeping:
                if busySince != 0, now > busySince {
                    let period = now - busySince
                    busyPeriods[LatencyHistogram.index(forNanoseconds: period)].add(1, ordering: .relaxed)
                    if period > longestBusyPeriod.load(ordering: .relaxed) {
                        longestBusyPeriod.store(period, ordering: .relaxed)
                    }
                }
                busySince = 0
            default: if precise, phase.isBusy, busySince == 0 { busySince = now }
            }
        }
        sequence &+= 1
        word.store(
            PackedActivity.pack(sequence: sequence, phase: phase, timestamp: stamp, mode: mode), ordering: .relaxed
        )
        if endProbeArmed.load(ordering: .relaxed) {
            endProbeArmed.store(false, ordering: .relaxed)
            endProbeTime.store(precise ? now : sw_agent_now_ns(), ordering: .releasing)
        }
    }

    /// The busy-period histogram so far (any thread); empty on a board that keeps none.
    func busyPeriodHistogram() -> LatencyHistogram {
        guard let busyPeriods else { return LatencyHistogram() }
        let counts = (0..<LatencyHistogram.bucketCount).map { busyPeriods[$0].load(ordering: .relaxed) }
        var histogram = LatencyHistogram(counts: counts) ?? LatencyHistogram()
        let longest = longestBusyPeriod.load(ordering: .relaxed)
        // Read after the counters: a period counted is then no longer than this.
        if longest > 0 { histogram.exactMaximum = longest }
        return histogram
    }

    /// The latest transition, read on the watcher's thread at `now`.
    func read(now: UInt64) -> ActivitySnapshot {
        PackedActivity.unpack(word.load(ordering: .relaxed), now: now)
    }

    /// Asks the loop thread to record the precise time of its next transition (the end of a stall).
    func armEndProbe() {
        endProbeTime.store(0, ordering: .relaxed)
        endProbeArmed.store(true, ordering: .releasing)
    }

    /// The time recorded by the end probe, if the main thread has moved since it was armed.
    func endProbe() -> UInt64? {
        let time = endProbeTime.load(ordering: .acquiring)
        return time == 0 ? nil : time
    }

    /// One reading for the detector, with the end probe re-armed exactly at it.
    ///
    /// The probe armed at the previous reading holds the first transition after it: the end of a stall declared on
    /// that reading. It is re-armed before reading again, and read again if the loop moved in between, so the new
    /// probe starts exactly at the new reading.
    func readWithEndProbe(now: UInt64) -> (snapshot: ActivitySnapshot, firstTransitionSincePreviousReading: UInt64?) {
        let firstTransition = endProbe()
        var snapshot: ActivitySnapshot
        var attempts = 0
        repeat {
            armEndProbe()
            snapshot = read(now: now)
            attempts += 1
        } while endProbe() != nil && attempts < 100
        return (snapshot, firstTransition)
    }
}
