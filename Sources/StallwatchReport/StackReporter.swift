// The output of `stallwatch stack`: a process's thread stacks as text for people or one JSON object for programs.
import StallwatchCore

/// Renders a ``ProcessStacks`` dump.
///
/// Text: one headline, then per thread a line with its id, name and state and the stack in the same columns as stall
/// reports. JSON: one object (`"event":"stack"`) with the same frame records as stall reports; the README documents it.
/// Scripts (`Scripts/bench`) read both, so changes are additions only.
public struct StackReporter: Sendable {
    private let json: Bool
    private let clock: WallClock

    public init(json: Bool, clock: WallClock) {
        self.json = json
        self.clock = clock
    }

    public func render(_ stacks: ProcessStacks) -> String {
        json ? renderJSON(stacks) : renderText(stacks)
    }

    // MARK: Text

    func renderText(_ stacks: ProcessStacks) -> String {
        let shown = stacks.threads.count
        var headline = "stallwatch: pid \(stacks.pid) (\(stacks.processName)), \(stacks.threadCount) thread"
        headline += stacks.threadCount == 1 ? "" : "s"
        if shown < stacks.threadCount { headline += ", \(shown) shown" }
        let stopped = stacks.threads.compactMap(\.stoppedNanoseconds)
        if let longest = stopped.max() {
            headline += "; each stopped at most \(TextReporter.precise(longest)) ms"
        }
        headline += "; at \(clock.timeOfDay(monotonic: stacks.capturedAt))"
        var lines = [headline]
        for warning in stacks.warnings { lines.append("stallwatch: warning: \(warning)") }
        let frameWriter = TextReporter(clock: clock, colored: false)
        for thread in stacks.threads {
            lines.append("")
            let main = thread.tid == stacks.pid ? " (main)" : ""
            lines.append("thread \(thread.tid) \"\(thread.name)\"\(main): \(Self.describe(thread.state))")
            if let error = thread.error { lines.append("  note: \(error)") }
            lines.append(contentsOf: frameWriter.stack(thread.frames))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "running", "waiting on a lock (futex)", "sleeping, in clock_nanosleep", "stopped (...)".
    static func describe(_ state: ThreadState?) -> String {
        guard let state else { return "state unknown" }
        switch state.state {
        case "R": return "running"
        case "T", "t": return "stopped (by a signal or a debugger)"
        case "Z", "X": return "exited"
        default:
            // A ptrace stop (an earlier stallwatch stack, a debugger) interrupted a sleep or wait, which the kernel
            // then resumes under this name with the time that was left.
            if state.syscall == "restart_syscall" { return "blocked, resuming an interrupted sleep or wait" }
            let call = state.syscall ?? state.waitChannel
            let reason = state.waitReason?.phrase ?? "blocked in the kernel"
            guard let call, !reason.contains(call) else { return reason }
            return "\(reason), in \(call)"
        }
    }

    // MARK: JSON

    func renderJSON(_ stacks: ProcessStacks) -> String {
        let frames = JSONLinesReporter(clock: clock)
        let record = JSONValue.object([
            ("event", .string("stack")),
            ("schemaVersion", .int(Int64(JSONLinesReporter.schemaVersion))),
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
                            ("threadState", thread.state.map(frames.stateRecord) ?? .null),
                            ("stoppedMs", thread.stoppedNanoseconds.map(JSONValue.milliseconds) ?? .null),
                            ("error", .optional(thread.error)),
                            ("frames", .array(thread.frames.map(frames.frameRecord))),
                        ])
                    })
            ),
            ("warnings", .array(stacks.warnings.map(JSONValue.string))),
        ])
        return record.serialized() + "\n"
    }
}
