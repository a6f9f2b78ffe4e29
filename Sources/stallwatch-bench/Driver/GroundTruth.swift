// The demo's own measurement of each stall, from its stderr, which the detection benchmark checks against.

/// `stallwatch-demo: stall scenario=cpu index=1 start_ns=<CLOCK_MONOTONIC ns> duration_ms=600.0 culprit=T.m`.
struct GroundTruth {
    let index: Int
    let startNanoseconds: UInt64
    let durationMilliseconds: Double
    /// `Type.method`, which a correct culprit's demangled symbol contains.
    let culprit: String

    private static let prefix = "stallwatch-demo: stall "

    /// Every ground-truth line in the demo's stderr, in order.
    static func parse(_ text: String) -> [GroundTruth] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(prefix) else { return nil }
            var fields: [Substring: Substring] = [:]
            for field in line.dropFirst(prefix.count).split(separator: " ") {
                let parts = field.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            guard let index = fields["index"].flatMap({ Int($0) }),
                let start = fields["start_ns"].flatMap({ UInt64($0) }),
                let duration = fields["duration_ms"].flatMap({ Double($0) }),
                let culprit = fields["culprit"]
            else { return nil }
            return GroundTruth(
                index: index, startNanoseconds: start, durationMilliseconds: duration, culprit: String(culprit))
        }
    }
}
