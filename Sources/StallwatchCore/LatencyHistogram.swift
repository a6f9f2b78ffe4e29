// A fixed-memory log-linear histogram of durations: every busy period of a run loop, in 256 counters.

/// Counts durations in log-linear buckets: each power-of-two range of microseconds is split into
/// ``subBuckets`` equal parts, so every bucket is within 1/8 (12.5 %) of the values it holds, from 1 µs to
/// over an hour, in a fixed 256 counters — whatever the run's length.
public struct LatencyHistogram: Equatable, Sendable {
    public static let subBuckets = 8
    static let subBucketBits = 3
    public static let bucketCount = 256

    public private(set) var counts: [UInt64]

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
        let micros = nanoseconds / 1000
        guard micros >= UInt64(subBuckets) else { return Int(micros) }
        let magnitude = 63 - micros.leadingZeroBitCount  // floor(log2), at least subBucketBits
        let shift = magnitude - subBucketBits
        let sub = Int((micros >> UInt64(shift)) & UInt64(subBuckets - 1))
        return min(bucketCount - 1, (shift + 1) * subBuckets + sub)
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

    public mutating func record(nanoseconds: UInt64) {
        counts[Self.index(forNanoseconds: nanoseconds)] += 1
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
    }

    public var total: UInt64 { counts.reduce(0, +) }

    /// The value at or below which `percent` of the recorded durations fall (the bucket's upper bound).
    public func percentile(_ percent: Double) -> UInt64? {
        let total = self.total
        guard total > 0 else { return nil }
        let rank = max(1, UInt64((Double(total) * percent / 100).rounded(.up)))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank { return Self.upperBound(ofBucket: index) }
        }
        return nil
    }

    /// The largest recorded duration's bucket upper bound.
    public var maximum: UInt64? {
        counts.lastIndex { $0 > 0 }.map(Self.upperBound(ofBucket:))
    }

    /// How many durations were at least `nanoseconds` long (counting whole buckets from the one holding it).
    public func count(atLeast nanoseconds: UInt64) -> UInt64 {
        counts[Self.index(forNanoseconds: nanoseconds)...].reduce(0, +)
    }
}
