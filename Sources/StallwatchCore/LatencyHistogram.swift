// A fixed-memory log-linear histogram of durations: every busy period of a run loop, in 256 counters.
import CStallwatchLoopModel

/// Counts durations in log-linear buckets: each power-of-two range of microseconds is split into
/// ``subBuckets`` equal parts, so every bucket is within 1/8 (12.5 %) of the values it holds, from 1 µs to
/// over an hour, in a fixed 256 counters — whatever the run's length. Percentiles are each bucket's middle, within
/// ``precisionPercent`` of the true value; the maximum is kept exactly beside the counters.
///
/// The buckets are the C loop model's (`sw_latency_histogram.h`), which the agent's board counts into.
public struct LatencyHistogram: Equatable, Sendable {
    /// How far a percentile's value may be from the true one, in percent: half a bucket's width over its start.
    public static let precisionPercent = 6.25
    public static var subBuckets: Int { Int(SW_HISTOGRAM_SUB_BUCKETS) }
    public static var bucketCount: Int { Int(SW_HISTOGRAM_BUCKETS) }

    public private(set) var counts: [UInt64]
    /// The longest duration recorded, exactly, when the recorder kept it (the agent does).
    public var exactMaximum: UInt64?

    public init() {
        counts = Array(repeating: 0, count: Self.bucketCount)
    }

    /// Rebuilds a histogram from counters (e.g. received from the agent); nil if the size is wrong.
    public init?(counts: [UInt64]) {
        guard counts.count == Self.bucketCount else { return nil }
        self.counts = counts
    }

    /// The bucket for a duration in nanoseconds.
    @inline(__always)
    public static func index(forNanoseconds nanoseconds: UInt64) -> Int {
        Int(sw_histogram_bucket(nanoseconds))
    }

    /// The non-empty buckets as `[index, count]` pairs: compact on the wire.
    public var sparse: [[UInt64]] {
        counts.enumerated().compactMap { index, count in count > 0 ? [UInt64(index), count] : nil }
    }

    /// More busy periods than any run has (one a nanosecond for three days): a count past it is not believed.
    public static let largestCount: UInt64 = 1 << 48

    /// Rebuilds a histogram from ``sparse`` pairs (received from an agent, so untrusted), ignoring malformed ones
    /// and capping counts at ``largestCount``, so that totals and merges cannot overflow.
    public init(sparse: [[UInt64]]) {
        self.init()
        for pair in sparse where pair.count == 2 && pair[0] < UInt64(Self.bucketCount) {
            counts[Int(pair[0])] = min(pair[1], Self.largestCount)
        }
    }

    /// The smallest duration (nanoseconds) a bucket holds.
    public static func lowerBound(ofBucket index: Int) -> UInt64 {
        guard index >= subBuckets else { return UInt64(index) * 1000 }
        let shift = index / subBuckets - 1
        let sub = UInt64(index % subBuckets)
        return ((UInt64(subBuckets) + sub) << UInt64(shift)) * 1000
    }

    /// The largest duration a bucket holds: reported percentiles never understate.
    public static func upperBound(ofBucket index: Int) -> UInt64 {
        index + 1 < bucketCount ? lowerBound(ofBucket: index + 1) - 1 : UInt64.max
    }

    /// The middle of a bucket: the value a percentile falling in it is shown as.
    public static func representative(ofBucket index: Int) -> UInt64 {
        let lower = lowerBound(ofBucket: index)
        let upper = upperBound(ofBucket: index)
        return upper == UInt64.max ? lower : lower + (upper - lower + 1) / 2
    }

    public mutating func record(nanoseconds: UInt64) {
        counts[Self.index(forNanoseconds: nanoseconds)] += 1
        exactMaximum = max(exactMaximum ?? 0, nanoseconds)
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        if let longest = other.exactMaximum { exactMaximum = max(exactMaximum ?? 0, longest) }
    }

    public var total: UInt64 { counts.reduce(0, +) }

    /// The value at or below which `percent` of the recorded durations fall: the middle of its bucket (within
    /// ``precisionPercent``), never more than the exact maximum when it is known.
    public func percentile(_ percent: Double) -> UInt64? {
        let total = self.total
        guard total > 0 else { return nil }
        let rank = max(1, UInt64((Double(total) * percent / 100).rounded(.up)))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank {
                let value = Self.representative(ofBucket: index)
                return exactMaximum.map { min(value, $0) } ?? value
            }
        }
        return nil
    }

    /// The longest recorded duration: exact when it was kept, otherwise its bucket's upper bound.
    public var maximum: UInt64? {
        guard let last = counts.lastIndex(where: { $0 > 0 }) else { return nil }
        return exactMaximum ?? Self.upperBound(ofBucket: last)
    }

    /// How many durations were at least `nanoseconds` long (counting whole buckets from the one holding it).
    public func count(atLeast nanoseconds: UInt64) -> UInt64 {
        counts[Self.index(forNanoseconds: nanoseconds)...].reduce(0, +)
    }
}
