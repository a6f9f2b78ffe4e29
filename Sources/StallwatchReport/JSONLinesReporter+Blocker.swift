// What a stalled thread waited for, as JSON: the stall's `blocker` (a lock and its holder, a child, a descriptor) and the
// `deadlock` record (docs/json-schema.md).
import StallwatchCore

extension JSONLinesReporter {
    /// `{"event":"deadlock", ...}`: one cycle of threads waiting on each other's locks, written when it is found.
    public func render(_ deadlock: DeadlockReport) -> String {
        JSONValue.object(
            [
                ("event", .string("deadlock")),
                ("schemaVersion", .int(Int64(Self.schemaVersion))),
            ] + hostKey + [
                ("pid", .int(Int64(deadlock.pid))),
                ("process", .string(deadlock.processName)),
                ("detectedAt", .string(clock.rfc3339(monotonic: deadlock.detectedAt))),
                ("detectedMonotonicMs", .milliseconds(deadlock.detectedAt)),
                ("stallId", .int(Int64(deadlock.stallIdentifier))),
                ("summary", .string(deadlock.summary)),
                (
                    "threads",
                    .array(
                        deadlock.threads.map { thread in
                            .object([
                                ("tid", .int(Int64(thread.tid))),
                                ("threadName", .optional(thread.name)),
                                ("threadState", thread.state.map(stateRecord) ?? .null),
                                (
                                    "waitsOn",
                                    .object([
                                        ("lockKind", .string(thread.lockKind.rawValue)),
                                        ("address", .hex(thread.lockAddress)),
                                    ])
                                ),
                                ("heldBy", .int(Int64(thread.holder))),
                                ("frames", .array(thread.frames.map(frameRecord))),
                            ])
                        })
                ),
            ]
        ).serialized() + "\n"
    }

    /// A stall's `blocker`: null, or what its thread waited for, with how long finding it took.
    func blockerValue(_ stall: StallReport) -> JSONValue {
        guard let blocker = stall.blocker else { return .null }
        guard case .object(let pairs) = blockerRecord(blocker) else { return .null }
        return .object(pairs + [("searchMs", stall.blockerSearchNanoseconds.map(JSONValue.milliseconds) ?? .null)])
    }

    func blockerRecord(_ blocker: Blocker) -> JSONValue {
        switch blocker {
        case .lock(let wait):
            return .object([
                ("kind", .string(blocker.kind)),
                ("summary", .string(blocker.summary)),
                ("lockKind", .string(wait.kind.rawValue)),
                ("address", .hex(wait.address)),
                ("futexOp", .string(wait.operation)),
                ("holder", wait.holder.map(holderRecord) ?? .null),
                ("note", .optional(wait.note)),
            ])
        case .child(let wait):
            var pid: JSONValue = .null
            var group: JSONValue = .null
            let waitsFor: String
            switch wait.target {
            case .child(let child):
                waitsFor = "child"
                pid = .int(Int64(child))
            case .anyChild: waitsFor = "anyChild"
            case .processGroup(let number):
                waitsFor = "processGroup"
                group = .int(Int64(number))
            case .pidDescriptor: waitsFor = "pidfd"
            }
            return .object([
                ("kind", .string(blocker.kind)),
                ("summary", .string(blocker.summary)),
                ("call", .string(wait.call)),
                ("waitsFor", .string(waitsFor)),
                ("pid", pid),
                ("processGroup", group),
                (
                    "children",
                    .array(
                        wait.children.map { child in
                            .object([
                                ("pid", .int(Int64(child.pid))),
                                ("process", .optional(child.name)),
                                ("commandLine", .optional(child.commandLine)),
                                ("threadState", child.state.map(stateRecord) ?? .null),
                                ("doing", .string(child.activity)),
                            ])
                        })
                ),
                ("note", .optional(wait.note)),
            ])
        case .descriptor(let wait):
            return descriptorRecord(wait, summary: blocker.summary)
        }
    }

    /// The holder of a lock: who, what it was doing, its stack, and what it waits for in turn.
    func holderRecord(_ holder: BlockingThread) -> JSONValue {
        .object([
            ("tid", .int(Int64(holder.tid))),
            ("threadName", .optional(holder.name)),
            ("closesCycle", .bool(holder.closesCycle)),
            ("threadState", holder.state.map(stateRecord) ?? .null),
            ("doing", holder.closesCycle ? .null : .string(holder.activity)),
            ("frames", .array(holder.frames.map(frameRecord))),
            ("stackNote", .optional(holder.stackNote)),
            ("blocker", holder.blocker.map(blockerRecord) ?? .null),
        ])
    }
}
