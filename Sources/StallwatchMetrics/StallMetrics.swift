// What the metrics endpoint exposes, as one value: the collector (or library mode's sink) updates it, a scrape copies
// it and renders the copy.
import StallwatchCore

/// The numbers behind `/metrics`: stalls per thread, the stalls in progress, the finished stalls' lengths, the loops'
/// busy periods, the threads watched and the time spent capturing.
///
/// A plain value, updated through its mutating methods by the one thread that watches, and copied whole by a scrape
/// (``MetricsRecorder``), so that rendering never holds up watching.
public struct StallMetrics: Equatable, Sendable {
    /// Most thread names given a series of their own: a program that names every thread anew (a pool with numbered
    /// workers that come and go) must not grow the scraper's series without end.
    public static let threadLabelLimit = 64
    /// The `thread` label of every thread past ``threadLabelLimit``.
    public static let otherThreads = "other"
    /// The `thread` label of a process's main thread (its run loop, or its main queue).
    public static let mainThread = "main"

    /// Lengths of finished stalls: from a few thresholds to minutes.
    public static let stallDurationBounds = BucketHistogram.bounds(
        seconds: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300])
    /// Time spent capturing and naming one stall's stacks: a fraction of a millisecond warm, seconds for a first
    /// symbolication or a helper that times out.
    public static let captureBounds = BucketHistogram.bounds(
        seconds: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5])

    /// A stall, as its watcher numbers it: the process and the stall's number there.
    public struct StallKey: Hashable, Sendable {
        public var pid: Int32
        public var identifier: Int

        public init(pid: Int32, identifier: Int) {
            self.pid = pid
            self.identifier = identifier
        }
    }

    /// A stall in progress: its series and when it began (`CLOCK_MONOTONIC` ns).
    public struct Ongoing: Equatable, Sendable {
        public var thread: String
        public var start: UInt64
    }

    /// Stalls detected so far, by `thread` label.
    public private(set) var stalls: [String: UInt64] = [:]
    /// The stalls in progress now.
    public private(set) var ongoing: [StallKey: Ongoing] = [:]
    public private(set) var stallDurations = BucketHistogram(bounds: StallMetrics.stallDurationBounds)
    public private(set) var captureDurations = BucketHistogram(bounds: StallMetrics.captureBounds)
    /// Each process's busy periods so far, as its watcher last sent them (cumulative counts).
    public private(set) var busyPeriods: [Int32: LatencyHistogram] = [:]
    /// Threads whose loops are watched now.
    public var watchedThreads = 0

    public init() {}

    /// The `thread` label for a thread's name: its own while fewer than ``threadLabelLimit`` names have one, else
    /// ``otherThreads``.
    public func label(for name: String) -> String {
        if stalls[name] != nil { return name }
        let named = stalls.count - (stalls[Self.otherThreads] == nil ? 0 : 1)
        return named < Self.threadLabelLimit ? name : Self.otherThreads
    }

    /// Gives a thread its series at 0 before any stall (the main thread's, when it is watched), so that a scraper
    /// sees the first stall as an increase.
    public mutating func showThread(_ name: String) {
        let thread = label(for: name)
        if stalls[thread] == nil { stalls[thread] = 0 }
    }

    /// A stall was detected: counted now, not at its end, so that a thread stalled for good still shows.
    public mutating func stallDetected(_ key: StallKey, thread name: String, start: UInt64) {
        guard ongoing[key] == nil else { return }
        let thread = label(for: name)
        stalls[thread, default: 0] += 1
        ongoing[key] = Ongoing(thread: thread, start: start)
    }

    /// A stall ended, or the watch ended while it went on (`duration` nil). One never detected is counted now: a
    /// stall outside the loop becomes one only when the thread comes back.
    ///
    /// - Parameter captureNanoseconds: the time spent capturing and naming its stacks; nil when none was taken.
    public mutating func stallFinished(
        _ key: StallKey, thread name: String, duration: UInt64?, captureNanoseconds: UInt64?
    ) {
        if ongoing.removeValue(forKey: key) == nil { stalls[label(for: name), default: 0] += 1 }
        if let duration { stallDurations.observe(nanoseconds: duration) }
        if let captureNanoseconds { captureDurations.observe(nanoseconds: captureNanoseconds) }
    }

    /// A process's busy periods so far (its watcher sends the whole histogram each time).
    public mutating func busyPeriods(_ histogram: LatencyHistogram, of pid: Int32) {
        busyPeriods[pid] = histogram
    }

    /// Every process's busy periods together.
    public var allBusyPeriods: LatencyHistogram {
        var merged = LatencyHistogram()
        for histogram in busyPeriods.values { merged.merge(histogram) }
        return merged
    }

    /// How long each thread has been stalled at `now`, in nanoseconds: its longest stall in progress, 0 when none.
    public func stalledNanoseconds(now: UInt64) -> [String: UInt64] {
        var stalled = stalls.mapValues { _ in UInt64(0) }
        for stall in ongoing.values {
            let age = now > stall.start ? now - stall.start : 0
            stalled[stall.thread] = max(stalled[stall.thread] ?? 0, age)
        }
        return stalled
    }
}

extension StallReport {
    /// The name the metrics give the stalled thread: `main` for the main thread's loop and queue.
    public var metricsThreadName: String {
        isMainThreadStall ? StallMetrics.mainThread : threadName ?? "?"
    }
}
