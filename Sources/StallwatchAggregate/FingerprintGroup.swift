// Stalls grouped by fingerprint across every run, process and host: the rows of the report's table.

/// All stalls with one fingerprint, and what they add up to.
public struct FingerprintGroup: Sendable, Equatable {
    public var fingerprint: String
    /// Indices into ``StallCollection/stalls``, in input order.
    public var stalls: [Int]
    public var unfinished: Int
    /// Of ``stalls``, those `--rate-limit` shortened (no samples): counted in every total all the same.
    public var suppressed = 0
    /// Stalled time: durations of finished stalls, plus what is known of unfinished ones.
    public var totalMs: Double
    /// Nearest-rank percentiles and maximum of finished stalls' durations; `nil` when none finished.
    public var p50Ms: Double?
    public var p95Ms: Double?
    public var maxMs: Double?
    /// Unix milliseconds of the first and last stall's start.
    public var firstSeenMs: Double
    public var lastSeenMs: Double
    public var runs: Int
    public var hosts: [String]
    /// The culprit frame most of its stalls name (index into ``StallCollection/frames``), and the callout.
    public var culprit: Int32?
    public var callout: String?
    public var process: String

    /// The groups of a collection, most stalled time first (ties by fingerprint).
    public static func groups(of collection: StallCollection) -> [FingerprintGroup] {
        var order: [String] = []
        var members: [String: [Int]] = [:]
        for (index, stall) in collection.stalls.enumerated() {
            if members[stall.fingerprint] == nil { order.append(stall.fingerprint) }
            members[stall.fingerprint, default: []].append(index)
        }
        let groups = order.map { group(fingerprint: $0, stalls: members[$0]!, in: collection) }
        return groups.sorted { ($0.totalMs, $1.fingerprint) > ($1.totalMs, $0.fingerprint) }
    }

    static func group(fingerprint: String, stalls indices: [Int], in collection: StallCollection) -> FingerprintGroup {
        var durations: [Double] = []
        var total = 0.0
        var unfinished = 0
        var suppressed = 0
        var first = Double.infinity
        var last = -Double.infinity
        var runs: Set<Int32> = []
        var hosts: [String] = []
        var culprits: [Int32: Int] = [:]
        var callouts: [String: Int] = [:]
        for index in indices {
            let stall = collection.stalls[index]
            if let duration = stall.durationMs, !stall.unfinished {
                durations.append(duration)
            } else {
                unfinished += 1
            }
            total += stall.knownDurationMs
            if stall.suppressed { suppressed += 1 }
            first = min(first, stall.startMs)
            last = max(last, stall.startMs)
            runs.insert(stall.run)
            if !hosts.contains(stall.host) { hosts.append(stall.host) }
            if let culprit = stall.culprit { culprits[culprit, default: 0] += 1 }
            if let callout = stall.callout { callouts[callout, default: 0] += 1 }
        }
        durations.sort()
        func rank(_ percent: Double) -> Double? {
            guard !durations.isEmpty else { return nil }
            let position = Int((percent / 100 * Double(durations.count)).rounded(.up))
            return durations[max(0, min(durations.count - 1, position - 1))]
        }
        let culprit = culprits.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
        let callout = callouts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
        var group = FingerprintGroup(
            fingerprint: fingerprint, stalls: indices, unfinished: unfinished, totalMs: total, p50Ms: rank(50),
            p95Ms: rank(95), maxMs: durations.last, firstSeenMs: first, lastSeenMs: last, runs: runs.count,
            hosts: hosts.sorted(), culprit: culprit, callout: callout,
            process: collection.stalls[indices[0]].process)
        group.suppressed = suppressed
        return group
    }
}
