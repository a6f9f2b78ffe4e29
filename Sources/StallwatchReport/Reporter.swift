// The output-format protocol: one conforming type per format.
import Glibc
import StallwatchCore

/// Renders everything stallwatch reports in one format: stalls and the summary of `run` and `attach` (attach's
/// records carry how the process was watched, in ``StallReport/attached`` and ``RunSummary/attached``), and the
/// stacks of `stack`.
///
/// Reporters turn values into text and never write anywhere themselves, so the collector decides where
/// records go and flushes each one as soon as it is rendered. A reporter may remember earlier stalls (the
/// text format groups repeats), hence `mutating`.
public protocol Reporter: Sendable {
    /// The text for one stall (finished, or unfinished when the run ends during it), ending in a newline.
    mutating func render(_ stall: StallReport) -> String
    /// The closing text of a run, ending in a newline.
    mutating func render(_ summary: RunSummary) -> String
    /// A short record written the moment a stall is detected, so that a report file has every stall even
    /// if stallwatch is killed before the stall ends. Empty for formats without one.
    mutating func renderDetected(_ stall: StallReport) -> String
    /// A `--fps` record: a second's frame rate or a run of dropped frames. Empty for formats (or events)
    /// without one; the text format shows the readings only as the summary's series.
    mutating func render(_ frames: FrameRateReport) -> String
    /// Threads found waiting on each other's locks, written the moment the cycle is found.
    mutating func render(_ deadlock: DeadlockReport) -> String
    /// `stallwatch stack`'s dump of a process's threads.
    mutating func render(_ stacks: ProcessStacks) -> String
}

extension Reporter {
    public mutating func renderDetected(_ stall: StallReport) -> String { "" }
    public mutating func render(_ frames: FrameRateReport) -> String { "" }
}

/// Converts `CLOCK_MONOTONIC` times into wall-clock timestamps for people.
public struct WallClock: Sendable {
    /// Wall-clock seconds since 1970 minus monotonic seconds, measured once per run.
    let offsetSeconds: Double

    public init(offsetSeconds: Double) {
        self.offsetSeconds = offsetSeconds
    }

    /// The offset between wall-clock and monotonic time, measured now.
    public static func now() -> WallClock {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let monotonic = monotonicNow()
        return WallClock(
            offsetSeconds: Double(wall.tv_sec) + Double(wall.tv_nsec) / 1e9 - Double(monotonic) / 1e9)
    }

    /// An RFC 3339 timestamp in UTC with milliseconds, e.g. `2026-11-29T14:03:05.123Z`.
    public func rfc3339(monotonic nanoseconds: UInt64) -> String {
        let seconds = Double(nanoseconds) / 1e9 + offsetSeconds
        let whole = Int(seconds.rounded(.down))
        let millis = min(999, Int(((seconds - Double(whole)) * 1000).rounded(.down)))
        let (days, secondOfDay) = whole.quotientAndRemainder(dividingBy: 86_400)
        let (year, month, day) = CivilCalendar.date(daysSinceEpoch: days)
        return String(
            format2(year, width: 4) + "-" + format2(month) + "-" + format2(day) + "T" + format2(secondOfDay / 3600)
                + ":" + format2(secondOfDay % 3600 / 60) + ":" + format2(secondOfDay % 60) + "."
                + format2(millis, width: 3) + "Z")
    }

    /// The time of day only, `14:03:05.123`, for text reports.
    public func timeOfDay(monotonic nanoseconds: UInt64) -> String {
        let stamp = rfc3339(monotonic: nanoseconds)
        let start = stamp.index(stamp.startIndex, offsetBy: 11)
        return String(stamp[start..<stamp.index(before: stamp.endIndex)])
    }
}

private func format2(_ value: Int, width: Int = 2) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
