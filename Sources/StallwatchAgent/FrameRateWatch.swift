// `--fps` on the watcher's side: the frame ticks drained into a FrameRateMonitor.
import StallwatchCore
import Synchronization

/// Turns the ticks in a ``FrameTickRing`` into frame-rate events for the sink.
///
/// The watcher drains it on each wake; the exit handler (on whichever thread calls `exit`) drains it one
/// last time and finishes the monitor. The lock serializes those two, which also keeps the ring's
/// single-consumer rule; the main thread, which produces the ticks, never takes it.
final class FrameRateWatch: Sendable {
    /// How often the watcher wakes at least, to drain the ring while the loop is idle or the threshold is
    /// long: readings then arrive about once a second, and the ring never fills.
    static let drainInterval: UInt64 = 200_000_000

    private struct State {
        var monitor: FrameRateMonitor
        var finished = false
    }

    private let ring: FrameTickRing
    private let state: Mutex<State>

    init(ring: FrameTickRing, configuration: FrameRateMonitor.Configuration) {
        self.ring = ring
        state = Mutex(State(monitor: FrameRateMonitor(configuration: configuration)))
    }

    /// The events of the ticks since the last drain.
    func drain() -> [FrameRateMonitor.Event] {
        state.withLock { state in
            guard !state.finished else { return [] }
            return ring.drain().flatMap { state.monitor.tick(at: $0) }
        }
    }

    /// The last events: the ticks not drained yet, the partial second and an open drop record. Once only.
    func finish() -> [FrameRateMonitor.Event] {
        state.withLock { state in
            guard !state.finished else { return [] }
            state.finished = true
            return ring.drain().flatMap { state.monitor.tick(at: $0) } + state.monitor.finish()
        }
    }
}
