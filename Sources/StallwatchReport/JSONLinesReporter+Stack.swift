// `stallwatch stack`'s dump as one JSON object.
import StallwatchCore

extension JSONLinesReporter {
    /// One object (`"event":"stack"`) with the same frame records as stall reports. Scripts (`Scripts/bench`) read
    /// it, so changes are additions only.
    public func render(_ stacks: ProcessStacks) -> String {
        let record = JSONValue.object([
            ("event", .string("stack")),
            ("schemaVersion", .int(Int64(Self.schemaVersion))),
            ("pid", .int(Int64(stacks.pid))),
            ("process", .string(stacks.processName)),
            ("capturedAt", .string(clock.rfc3339(monotonic: stacks.capturedAt))),
            ("captureMonotonicMs", .milliseconds(stacks.capturedAt)),
            ("threadCount", .int(Int64(stacks.threadCount))),
            ("elapsedMs", .milliseconds(stacks.elapsedNanoseconds)),
            (
                "threads",
                .array(
                    stacks.threads.map { thread in
                        .object([
                            ("tid", .int(Int64(thread.tid))),
                            ("name", .string(thread.name)),
                            ("main", .bool(thread.tid == stacks.pid)),
                            ("threadState", thread.state.map(stateRecord) ?? .null),
                            ("stoppedMs", thread.stoppedNanoseconds.map(JSONValue.milliseconds) ?? .null),
                            ("error", .optional(thread.error)),
                            ("frames", .array(thread.frames.map(frameRecord))),
                            ("truncated", thread.truncation.map(truncationRecord) ?? .null),
                        ])
                    })
            ),
            ("warnings", .array(stacks.warnings.map(JSONValue.string))),
        ])
        return record.serialized() + "\n"
    }
}
