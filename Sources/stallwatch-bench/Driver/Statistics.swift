// Order statistics for benchmark samples: medians resist the outliers a shared machine produces.

extension Array where Element == Double {
    /// The middle value (the mean of the two middle ones for an even count); 0 for no samples.
    var median: Double {
        guard !isEmpty else { return 0 }
        let sorted = self.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    /// The nearest-rank percentile: the smallest sample with at least `percent` % of samples at or below it.
    func percentile(_ percent: Double) -> Double {
        guard !isEmpty else { return 0 }
        let sorted = self.sorted()
        let rank = Int((percent / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }
}
