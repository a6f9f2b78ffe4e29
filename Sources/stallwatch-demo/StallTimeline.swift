// The run's timetable: when each stall starts and when the demo exits.
/// When each stall starts and when the demo exits, all fixed from one origin so timer drift never accumulates.
///
/// The run is a quiet lead-in, then one `period` per stall (the stall at its start, idle for the rest), then a
/// quiet tail: a watcher sees the loop idle before the first stall and after the last one.
struct StallTimeline: Sendable {
    static let leadIn: Duration = .milliseconds(300)
    static let tail: Duration = .milliseconds(300)

    let origin: MonotonicInstant
    let stallCount: Int
    let stallDuration: Duration
    let period: Duration

    /// Stall numbers as the ground truth prints them, starting at 1.
    var stallIndices: ClosedRange<Int> { 1...stallCount }

    var end: MonotonicInstant { origin + Self.leadIn + period * stallCount + Self.tail }

    func start(ofStall index: Int) -> MonotonicInstant { origin + Self.leadIn + period * (index - 1) }
}
