// The machine-readable format: one JSON object per line (NDJSON), schema documented in docs/json-schema.md.
import StallwatchCore

/// Renders each stall and the summary as one line of JSON.
///
/// The schema is versioned by `schemaVersion` in every record; readers should ignore keys and `event`
/// kinds they do not know, so later versions can add both.
public struct JSONLinesReporter: Reporter {
    /// The version this reporter writes: ``RecordSchema/version``.
    public static let schemaVersion = RecordSchema.version

    let clock: WallClock
    /// The `host` key of every record (`stallwatch report` merges runs from many machines); none when `nil`.
    let host: String?

    public init(clock: WallClock, host: String? = nil) {
        self.clock = clock
        self.host = host
    }

    /// `("host", ...)` when the reporter has a host.
    var hostKey: [(String, JSONValue)] {
        host.map { [("host", JSONValue.string($0))] } ?? []
    }

    public func render(_ stall: StallReport) -> String {
        record(for: stall).serialized() + "\n"
    }

    /// `{"event":"stall-detected", ...}`: the stall's identity, start and first sample, written at detection.
    /// The full `stall` record with the same `pid` and `id` follows when it ends.
    public func renderDetected(_ stall: StallReport) -> String {
        JSONValue.object(
            identity(of: stall, event: "stall-detected") + [
                (
                    "detectedAfterMs",
                    .milliseconds(stall.detectedAt >= stall.start ? stall.detectedAt - stall.start : 0)
                ),
                ("activity", .string(stall.phase.name)),
                ("runLoopMode", .optional(stall.mode)),
                ("strategy", .optional(stall.strategy?.rawValue)),
                ("callout", .optional(stall.callout?.rawValue)),
                ("fingerprint", .string(stall.fingerprint)),
                ("culprit", stall.dominantFrame.map(frameRecord) ?? .null),
                ("blocker", blockerValue(stall)),
                ("samples", .array(shownSamples(of: stall).prefix(1).map { sampleRecord($0, stall: stall) })),
            ] + suppressedKey(stall)
        ).serialized() + "\n"
    }

    /// The keys that start both stall records: what the record is, and which stall of which process.
    func identity(of stall: StallReport, event: String) -> [(String, JSONValue)] {
        [
            ("event", .string(event)),
            ("schemaVersion", .int(Int64(Self.schemaVersion))),
        ] + hostKey + [
            ("id", .int(Int64(stall.identifier))),
            ("pid", .int(Int64(stall.pid))),
            ("tid", .int(Int64(stall.tid))),
            ("threadName", .optional(stall.threadName)),
            ("process", .string(stall.processName)),
            ("startedAt", .string(clock.rfc3339(monotonic: stall.start))),
            ("startMonotonicMs", .milliseconds(stall.start)),
        ]
    }

    public func render(_ summary: RunSummary) -> String {
        record(for: summary).serialized() + "\n"
    }

    func record(for stall: StallReport) -> JSONValue {
        .object(
            identity(of: stall, event: "stall") + [
                ("durationMs", stall.duration.map(JSONValue.milliseconds) ?? .null),
                ("unfinished", .bool(stall.end == nil)),
                // Its duration, or for an unfinished stall the length it had reached when the watch ended.
                ("lengthMs", .milliseconds(stall.length())),
            ] + suppressedKey(stall) + [
                ("thresholdMs", .milliseconds(stall.thresholdNanoseconds)),
                ("count", .int(Int64(stall.count))),
            ] + attachedRecord(stall.attached) + [
                // No run-loop phase is seen from outside.
                ("activity", .string(stall.attached?.mode.knowsLoopPhase == false ? "unknown" : stall.phase.name)),
                ("runLoopMode", .optional(stall.mode)),
                ("strategy", .optional(stall.strategy?.rawValue)),
                ("callout", .optional(stall.callout?.rawValue)),
                ("fingerprint", .string(stall.fingerprint)),
                (
                    "detectedAfterMs",
                    .milliseconds(stall.detectedAt >= stall.start ? stall.detectedAt - stall.start : 0)
                ),
                (
                    "capture",
                    .object([
                        ("method", .string(stall.captureMethod.rawValue)), ("note", .optional(stall.captureNote)),
                    ])
                ),
                ("culprit", stall.dominantFrame.map(frameRecord) ?? .null),
                ("thread", stall.threadActivity.map(activityRecord) ?? .null),
                ("blocker", blockerValue(stall)),
                (
                    "confidence",
                    .object([
                        ("level", .string(stall.confidenceNote == nil ? "high" : "low")),
                        ("watcherLateMs", .milliseconds(stall.watcherLateness)),
                        ("note", .optional(stall.confidenceNote)),
                    ])
                ),
                ("samples", .array(shownSamples(of: stall).map { sampleRecord($0, stall: stall) })),
            ])
    }

    /// `"suppressed": true` for a stall the rate limit shortened; no key otherwise, so other records stay as they were.
    func suppressedKey(_ stall: StallReport) -> [(String, JSONValue)] {
        stall.suppressed ? [("suppressed", .bool(true))] : []
    }

    /// The samples a record shows: none for a suppressed stall, whose one sample named its fingerprint and culprit
    /// (both in the record) and whose stack is left out to keep the record short.
    func shownSamples(of stall: StallReport) -> [Sample] {
        stall.suppressed ? [] : stall.samples
    }

    /// The summary's `strategy`: how the processes were watched, `mixed` when they differed, null for none.
    static func strategyValue(_ strategies: [WatchStrategy]) -> JSONValue {
        switch strategies.count {
        case 0: .null
        case 1: .string(strategies[0].rawValue)
        default: .string("mixed")
        }
    }

    /// `attach`'s keys: how the process was watched (none under `run`).
    func attachedRecord(_ attached: AttachedStall?) -> [(String, JSONValue)] {
        guard let attached else { return [] }
        return [
            ("mode", .string(attached.mode.rawValue)),
            ("resolutionMs", attached.resolutionNanoseconds.map(JSONValue.milliseconds) ?? .null),
            ("startedBeforeAttach", .bool(attached.startedBeforeAttach)),
        ]
    }

    func sampleRecord(_ sample: Sample, stall: StallReport) -> JSONValue {
        .object([
            ("capturedAfterMs", .milliseconds(sample.capturedAt >= stall.start ? sample.capturedAt - stall.start : 0)),
            ("stoppedMs", sample.stoppedNanoseconds.map(JSONValue.milliseconds) ?? .null),
            ("threadState", sample.threadState.map(stateRecord) ?? .null),
            ("frames", .array(sample.frames.map(frameRecord))),
            ("truncated", sample.truncation.map(truncationRecord) ?? .null),
            ("cutShort", .optional(sample.cutShort)),
        ])
    }

    /// The frames a capture left out of a deep stack: `frames[resumesAtFrame...]` are the outermost ones kept.
    func truncationRecord(_ truncation: StackTruncation) -> JSONValue {
        .object([
            ("omittedFrames", truncation.omittedFrames.map { .int(Int64($0)) } ?? .null),
            ("resumesAtFrame", .int(Int64(truncation.resumesAt))),
            ("maxFrames", .int(Int64(truncation.maxFrames))),
            ("walkLimited", .bool(truncation.walkLimited)),
            ("reason", .string(truncation.reason)),
        ])
    }

    /// The run loop's busy periods: count, percentiles (bucket middles, within 6.25 %), the exact maximum, and how
    /// many reached the threshold.
    func busyPeriodsRecord(_ histogram: LatencyHistogram, threshold: UInt64?) -> JSONValue {
        func milliseconds(_ value: UInt64?) -> JSONValue { value.map(JSONValue.milliseconds) ?? .null }
        return .object([
            ("count", .int(Int64(histogram.total))),
            ("p50Ms", milliseconds(histogram.percentile(50))),
            ("p90Ms", milliseconds(histogram.percentile(90))),
            ("p99Ms", milliseconds(histogram.percentile(99))),
            ("p999Ms", milliseconds(histogram.percentile(99.9))),
            ("maxMs", milliseconds(histogram.maximum)),
            ("atLeastThreshold", threshold.map { .int(Int64(histogram.count(atLeast: $0))) } ?? .null),
        ])
    }

    func activityRecord(_ activity: ThreadActivity) -> JSONValue {
        .object([
            ("verdict", .string(activity.verdict.rawValue)),
            ("cpuPercent", activity.cpuPercent.map { .double(($0 * 10).rounded() / 10) } ?? .null),
            ("runnablePercent", activity.runnablePercent.map { .double(($0 * 10).rounded() / 10) } ?? .null),
            ("blockedOn", .optional(activity.blockedOn?.rawValue)),
            ("cpuCensus", activity.cpuCensus.map(censusRecord) ?? .null),
        ])
    }

    func censusRecord(_ census: CPUCensus) -> JSONValue {
        .object([
            ("window", .string("detection-to-end")),
            ("windowMs", JSONValue.milliseconds(census.windowNanoseconds)),
            (
                "holders",
                .array(
                    census.holders.map { holder in
                        .object([
                            ("pid", .int(Int64(holder.pid))), ("tid", holder.tid.map { .int(Int64($0)) } ?? .null),
                            ("name", .string(holder.name)), ("cpuMs", JSONValue.milliseconds(holder.cpuNanoseconds)),
                            ("percentOfACPU", .double((census.percentOfACPU(holder) * 10).rounded() / 10)),
                        ])
                    })
            ),
        ])
    }

    func stateRecord(_ state: ThreadState) -> JSONValue {
        .object([
            ("state", .string(String(state.state))),
            ("syscall", .optional(state.syscall)),
            ("waitChannel", .optional(state.waitChannel)),
        ])
    }

    func frameRecord(_ frame: Frame) -> JSONValue {
        .object([
            ("address", .hex(frame.address)),
            ("image", .optional(frame.image)),
            ("offset", frame.offset.map(JSONValue.hex) ?? .null),
            ("symbol", .optional(frame.symbol)),
            ("file", .optional(frame.file)),
            ("line", .optional(frame.line)),
            ("column", .optional(frame.column)),
            ("inlined", .bool(frame.inlined)),
            ("async", .bool(frame.async)),
        ])
    }

    func record(for summary: RunSummary) -> JSONValue {
        let share =
            summary.runNanoseconds > 0
            ? Double(summary.totalStallNanoseconds) / Double(summary.runNanoseconds) : 0
        var pairs: [(String, JSONValue)] =
            [
                ("event", .string("summary")),
                ("schemaVersion", .int(Int64(Self.schemaVersion))),
            ] + hostKey + [
                ("stalls", .int(Int64(summary.stallCount))),
                ("unfinished", .int(Int64(summary.unfinishedCount))),
                ("suppressed", .int(Int64(summary.suppressedCount))),
                ("totalStallMs", .milliseconds(summary.totalStallNanoseconds)),
                ("longestStallMs", .milliseconds(summary.longestStallNanoseconds)),
                ("medianStallMs", .milliseconds(summary.medianStallNanoseconds)),
                ("p95StallMs", .milliseconds(summary.p95StallNanoseconds)),
                (
                    "topCulprits",
                    .array(
                        summary.topCulprits.map { culprit in
                            .object([
                                ("symbol", .string(culprit.symbol)),
                                ("totalMs", .milliseconds(culprit.totalNanoseconds)),
                                ("stalls", .int(Int64(culprit.count))),
                            ])
                        })
                ),
                ("runMs", .milliseconds(summary.runNanoseconds)),
                ("stalledShare", .double((share * 10_000).rounded() / 10_000)),
                ("watchedPids", .array(summary.watchedPids.map { .int(Int64($0)) })),
                ("strategy", Self.strategyValue(summary.strategies)),
                ("exitStatus", summary.exitStatus.map { .int(Int64($0)) } ?? .null),
                ("warnings", .array(summary.warnings.map(JSONValue.string))),
                ("timedOut", .bool(summary.timedOut)),
                ("deadlocks", .int(Int64(summary.deadlockCount))),
                (
                    "busyPeriods",
                    summary.busyPeriods.map { busyPeriodsRecord($0, threshold: summary.thresholdNanoseconds) } ?? .null
                ),
                (
                    "budget",
                    summary.budget.map { verdict in
                        .object([
                            ("broken", .bool(verdict.isBroken)),
                            ("violations", .array(verdict.violations.map(JSONValue.string))),
                            ("excusedByBaseline", .int(Int64(verdict.excusedByBaseline))),
                        ])
                    } ?? .null
                ),
            ]
        // Only when some stall was not the main thread's (--thread), so other summaries stay as they were.
        if !summary.threads.isEmpty {
            pairs.append(
                (
                    "threads",
                    .array(
                        summary.threads.map { total in
                            .object([
                                ("pid", .int(Int64(total.pid))), ("tid", .int(Int64(total.tid))),
                                ("threadName", .string(total.name)), ("stalls", .int(Int64(total.stallCount))),
                                ("totalMs", .milliseconds(total.stalledNanoseconds)),
                            ])
                        })
                ))
        }
        // Only with --fps, so summaries without it stay as they were.
        if let rates = summary.framesPerSecond { pairs.append(("fps", .array(rates.map(JSONValue.framesPerSecond)))) }
        if let attached = summary.attached {
            var signal: JSONValue = .null
            if case .signal(let number) = attached.ending { signal = .int(Int64(number)) }
            pairs += [
                ("mode", .string(attached.mode.rawValue)), ("pid", .int(Int64(attached.pid))),
                ("ended", .string(attached.ending.name)), ("signal", signal),
            ]
        }
        return .object(pairs)
    }
}
