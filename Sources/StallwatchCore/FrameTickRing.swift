// The hand-off of frame ticks from the main thread to the watcher: a lock-free single-producer,
// single-consumer ring of atomics.
import Synchronization

/// Times of the `--fps` tick, appended on the main thread and drained on the watcher thread.
///
/// The tick's callback must cost the main thread next to nothing and must never block on the watcher,
/// so it only stores one word and bumps a counter; the watcher drains whatever arrived on each wake.
/// Exactly one thread may ``append(_:)`` and exactly one (at a time) may ``drain()``. When the ring is
/// full, new ticks are dropped and counted rather than overwriting ones the watcher has not read.
public final class FrameTickRing: Sendable {
    /// Slots; a power of two so an index is a mask away from a position.
    public let capacity: Int
    /// Only atomics are reached through the pointer, which lives as long as the ring: safe from any thread.
    nonisolated(unsafe) private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    /// Ticks appended so far (producer-owned) and ticks drained so far (consumer-owned).
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)
    private let overflows = Atomic<Int>(0)

    /// - Parameter capacity: rounded up to a power of two; 1024 ticks hold 17 s at 60 Hz.
    public init(capacity: Int = 1024) {
        var size = 1
        while size < max(2, capacity) { size <<= 1 }
        self.capacity = size
        slots = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: size)
        for index in 0..<size { (slots + index).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Appends one tick time. Producer thread only; never blocks. False if the ring was full.
    @discardableResult
    public func append(_ time: UInt64) -> Bool {
        let position = written.load(ordering: .relaxed)
        guard position - read.load(ordering: .acquiring) < capacity else {
            overflows.add(1, ordering: .relaxed)
            return false
        }
        slots[position & (capacity - 1)].store(time, ordering: .relaxed)
        written.store(position + 1, ordering: .releasing)
        return true
    }

    /// Every tick appended since the last drain, oldest first. Consumer thread only.
    public func drain() -> [UInt64] {
        let start = read.load(ordering: .relaxed)
        let end = written.load(ordering: .acquiring)
        guard end > start else { return [] }
        let times = (start..<end).map { slots[$0 & (capacity - 1)].load(ordering: .relaxed) }
        read.store(end, ordering: .releasing)
        return times
    }

    /// Ticks lost because the ring was full.
    public var overflowCount: Int { overflows.load(ordering: .relaxed) }
}
