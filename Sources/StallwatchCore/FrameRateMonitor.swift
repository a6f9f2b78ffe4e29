// Frame lateness as Tencent Matrix measures it: effective FPS per second and weighted dropped time.
import FoundationEssentials
import Glibc

/// Turns the times of a 60 Hz tick on the main run loop into frame-rate readings.
///
/// The tick is a run-loop timer, so it fires late when the loop is busy; its lateness is measured on the
/// monotonic clock, never from the timer's own schedule. Two outputs:
/// - once a second, the effective FPS (ticks seen ÷ seconds elapsed) and the time dropped in that second;
/// - Matrix's frame-drop records: a frame longer than `maxFrameInterval` adds its length to the current
///   record's total and `maxFrameInterval × (length / maxFrameInterval)^powFactor` to its dropped time (long
///   frames weigh more than linearly); the record is emitted when its total passes
///   `dumpInterval × dumpMaxCount`, or, at the next smooth frame, if its total passed `maxDumpTimestamp`;
///   otherwise a smooth frame resets it.
public struct FrameRateMonitor: Sendable {
    public struct Configuration: Equatable, Sendable {
        /// The tick's period: 1/60 s.
        public var frameInterval: UInt64 = 16_666_667
        /// Frames longer than this count as dropping time (Matrix's `maxFrameInterval`).
        public var maxFrameInterval: UInt64 = 50_000_000
        /// How much more than linearly long frames weigh.
        public var powFactor: Double = 1.5
        /// A run of slow frames past `dumpInterval × dumpMaxCount` (2 s) is reported without waiting for it to
        /// end (Matrix's two parameters; ``dumpThreshold`` sets them together).
        public var dumpInterval: UInt64 = 250_000_000
        public var dumpMaxCount: Int = 8
        /// A record at least this long is emitted when the frames turn smooth again.
        public var maxDumpTimestamp: UInt64 = 250_000_000

        public init() {}

        /// `--fps-dump`: one setting for Matrix's two dump limits. A run of slow frames is reported when it
        /// ends if it reached this, and at once past 8 times this (the defaults: 250 ms, and 2 s).
        public var dumpThreshold: UInt64 {
            get { maxDumpTimestamp }
            set {
                maxDumpTimestamp = newValue
                dumpInterval = newValue
                dumpMaxCount = 8
            }
        }
    }

    /// One second's reading.
    public struct Reading: Equatable, Sendable {
        public var start: UInt64
        public var end: UInt64
        public var frames: Int
        /// Weighted dropped time in the second, nanoseconds.
        public var dropped: UInt64

        public init(start: UInt64, end: UInt64, frames: Int, dropped: UInt64) {
            self.start = start
            self.end = end
            self.frames = frames
            self.dropped = dropped
        }

        public var framesPerSecond: Double {
            end > start ? Double(frames) / (Double(end - start) / 1e9) : 0
        }
    }

    /// A run of slow frames worth reporting (Matrix's dump).
    public struct DropRecord: Equatable, Sendable {
        public var begin: UInt64
        public var end: UInt64
        /// Time spent in slow frames.
        public var total: UInt64
        /// Weighted dropped time.
        public var dropped: UInt64

        public init(begin: UInt64, end: UInt64, total: UInt64, dropped: UInt64) {
            self.begin = begin
            self.end = end
            self.total = total
            self.dropped = dropped
        }
    }

    public enum Event: Equatable, Sendable {
        case reading(Reading)
        case drops(DropRecord)
    }

    public let configuration: Configuration
    private var previousTick: UInt64?
    private var second: Reading?
    private var record: DropRecord?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// A tick fired at `time` (`CLOCK_MONOTONIC` nanoseconds).
    public mutating func tick(at time: UInt64) -> [Event] {
        var events: [Event] = []
        defer { previousTick = time }
        guard let previous = previousTick, time > previous else {
            second = Reading(start: time, end: time, frames: 0, dropped: 0)
            return events
        }
        let diff = time - previous
        let maxFrame = configuration.maxFrameInterval
        var dropped: UInt64 = 0
        if diff > maxFrame {
            dropped = UInt64(Double(maxFrame) * pow(Double(diff) / Double(maxFrame), configuration.powFactor))
            var current = record ?? DropRecord(begin: previous, end: time, total: 0, dropped: 0)
            current.end = time
            current.total += diff
            current.dropped += dropped
            record = current
            if current.total > configuration.dumpInterval * UInt64(configuration.dumpMaxCount) {
                events.append(.drops(current))
                record = nil
            }
        } else if let current = record {
            if current.total > configuration.maxDumpTimestamp { events.append(.drops(current)) }
            record = nil
        }
        var reading = second ?? Reading(start: previous, end: previous, frames: 0, dropped: 0)
        reading.frames += 1
        reading.end = time
        reading.dropped += dropped
        if time - reading.start >= 1_000_000_000 {
            events.append(.reading(reading))
            reading = Reading(start: time, end: time, frames: 0, dropped: 0)
        }
        second = reading
        return events
    }

    /// What is left at the end of a run: a partial second and an open record worth reporting.
    public mutating func finish() -> [Event] {
        var events: [Event] = []
        if let reading = second, reading.frames > 0 { events.append(.reading(reading)) }
        if let current = record, current.total > configuration.maxDumpTimestamp { events.append(.drops(current)) }
        second = nil
        record = nil
        return events
    }
}
