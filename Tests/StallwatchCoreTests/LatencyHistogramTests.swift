// The busy-period histogram: bucket bounds, percentiles within the stated precision, an exact maximum, fixed size.
import Testing

@testable import StallwatchCore

@Suite struct LatencyHistogramTests {
    @Test(arguments: [0, 1, 7, 8, 9, 15, 16, 17, 100, 1_000, 79_999, 80_000, 150_000, 3_600_000_000] as [UInt64])
    func everyValueLiesWithinItsBucket(micros: UInt64) {
        let nanoseconds = micros * 1000
        let index = LatencyHistogram.index(forNanoseconds: nanoseconds)
        #expect(LatencyHistogram.lowerBound(ofBucket: index) <= nanoseconds)
        #expect(nanoseconds <= LatencyHistogram.upperBound(ofBucket: index))
        // Log-linear: a bucket is at most 1/8 of its lower bound wide (exact below 8 µs).
        let width = LatencyHistogram.upperBound(ofBucket: index) - LatencyHistogram.lowerBound(ofBucket: index)
        #expect(width <= max(999, LatencyHistogram.lowerBound(ofBucket: index) / 8))
    }

    @Test func bucketsAreContiguous() {
        for index in 1..<LatencyHistogram.bucketCount {
            #expect(
                LatencyHistogram.lowerBound(ofBucket: index) == LatencyHistogram.upperBound(ofBucket: index - 1) + 1)
        }
    }

    @Test func percentilesOfManyHiccups() {
        var histogram = LatencyHistogram()
        // 990 periods of 2 ms and 10 of 150 ms: p99 is still 2 ms-ish, p99.9 is the hiccups.
        for _ in 0..<990 { histogram.record(nanoseconds: 2_000_000) }
        for _ in 0..<10 { histogram.record(nanoseconds: 150_000_000) }
        #expect(histogram.total == 1000)
        let p50 = histogram.percentile(50) ?? 0
        #expect(isWithinPrecision(p50, of: 2_000_000), "\(p50)")
        #expect(isWithinPrecision(histogram.percentile(99) ?? 0, of: 2_000_000))
        let p999 = histogram.percentile(99.9) ?? 0
        #expect(isWithinPrecision(p999, of: 150_000_000), "\(p999)")
        #expect(histogram.count(atLeast: 80_000_000) == 10)
        #expect(histogram.maximum == 150_000_000, "the maximum is exact")
    }

    private func isWithinPrecision(_ value: UInt64, of truth: UInt64) -> Bool {
        abs(Double(value) - Double(truth)) <= Double(truth) * LatencyHistogram.precisionPercent / 100
    }

    /// The case: a 601 ms longest stall was shown as its bucket's upper bound, 655.36 ms.
    @Test(arguments: [601_000_000, 1_234_567, 80_000_001, 9_999] as [UInt64])
    func theMaximumIsExactAndPercentilesAreWithinPrecision(longest: UInt64) {
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: longest)
        #expect(histogram.maximum == longest)
        let p50 = histogram.percentile(50) ?? 0
        #expect(isWithinPrecision(p50, of: longest), "\(p50) for \(longest)")
        #expect(p50 <= longest, "never above the exact maximum")
    }

    @Test func everyBucketsMiddleIsWithinThePrecisionOfItsValues() {
        for index in 8..<(LatencyHistogram.bucketCount - 1) {
            let middle = Double(LatencyHistogram.representative(ofBucket: index))
            for bound in [LatencyHistogram.lowerBound(ofBucket: index), LatencyHistogram.upperBound(ofBucket: index)] {
                #expect(abs(middle - Double(bound)) <= Double(bound) * LatencyHistogram.precisionPercent / 100)
            }
        }
    }

    @Test func countsReceivedWithoutTheMaximumFallBackToTheBucketBound() {
        let histogram = LatencyHistogram(sparse: [[UInt64(LatencyHistogram.index(forNanoseconds: 601_000_000)), 1]])
        #expect(
            histogram.maximum
                == LatencyHistogram.upperBound(ofBucket: LatencyHistogram.index(forNanoseconds: 601_000_000)))
    }

    @Test func mergeAddsCounts() {
        var one = LatencyHistogram()
        one.record(nanoseconds: 5_000_000)
        var other = LatencyHistogram()
        other.record(nanoseconds: 5_000_000)
        other.record(nanoseconds: 7_000_000)
        one.merge(other)
        #expect(one.total == 3)
        #expect(one.maximum == 7_000_000)
        #expect(LatencyHistogram(counts: [1, 2]) == nil, "fixed size")
        #expect(LatencyHistogram().percentile(50) == nil)
    }
}
