// `stallwatch stack`'s dump as text.
import StallwatchCore

extension TextReporter {
    /// One headline, then per thread a line with its id, name and state and the stack in the columns of stall
    /// reports, never coloured.
    public func render(_ stacks: ProcessStacks) -> String {
        let shown = stacks.threads.count
        var headline = "stallwatch: pid \(stacks.pid) (\(stacks.processName)), \(stacks.threadCount) thread"
        headline += stacks.threadCount == 1 ? "" : "s"
        if shown < stacks.threadCount { headline += ", \(shown) shown" }
        let stopped = stacks.threads.compactMap(\.stoppedNanoseconds)
        if let longest = stopped.max() {
            headline += "; each stopped at most \(Self.precise(longest)) ms"
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
            lines.append(contentsOf: frameWriter.stack(thread.frames, truncation: thread.truncation))
        }
        return TerminalText.lines(lines) + "\n"
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
}
