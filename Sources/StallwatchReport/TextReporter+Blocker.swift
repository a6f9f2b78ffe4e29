// What a stalled thread waited for, as text: the lock, its holder and the holder's stack, the chain of holders, the
// child; and the DEADLOCK block.
import StallwatchCore

extension TextReporter {
    /// Frames shown of a holder's stack: where it is and how it got there, not the whole thread.
    static let holderFramesShown = 16

    /// `DEADLOCK in Daemon (pid 42): …`, then each thread: the lock it waits on, who holds it, and its stack.
    public func render(_ deadlock: DeadlockReport) -> String {
        var lines = [
            style.bold(
                "stallwatch: DEADLOCK in \(deadlock.processName) (pid \(deadlock.pid)): \(deadlock.summary)"
                    + " (found at stall #\(deadlock.stallIdentifier))")
        ]
        let names = Dictionary(deadlock.threads.map { ($0.tid, $0.label) }, uniquingKeysWith: { first, _ in first })
        for thread in deadlock.threads {
            lines.append(
                "  \(thread.label) waits on \(thread.lockKind.phrase) 0x\(String(thread.lockAddress, radix: 16))"
                    + " held by \(names[thread.holder] ?? "tid \(thread.holder)")")
            lines.append(contentsOf: shortStack(thread.frames, indent: "  "))
        }
        return TerminalText.lines(lines) + "\n\n"
    }

    /// The lines of a stall's block that say what its thread waited for; empty without a blocker.
    func blockerLines(_ stall: StallReport) -> [String] {
        guard let blocker = stall.blocker else { return [] }
        switch blocker {
        case .lock(let wait): return lockLines(wait, lead: "waiting on", depth: 0)
        case .child(let wait): return childLines(wait)
        case .descriptor(let wait): return descriptorLines(wait)
        }
    }

    /// A lock wait, its holder and the holder's stack; then, for a holder blocked too, the next link.
    func lockLines(_ wait: LockWait, lead: String, depth: Int) -> [String] {
        let indent = String(repeating: "  ", count: depth + 1)
        let lock = "\(wait.kind.phrase) 0x\(String(wait.address, radix: 16)) (\(wait.operation))"
        guard let holder = wait.holder else {
            return ["\(indent)\(lead): \(lock)" + (wait.note.map { "; \($0)" } ?? "")]
        }
        if holder.closesCycle {
            return [
                style.bold(
                    "\(indent)\(lead): \(lock), held by \(holder.label): DEADLOCK (the cycle is reported on its own)")
            ]
        }
        let verb = wait.kind == .threadJoin ? "the thread it joins:" : "held by"
        var lines = [style.bold("\(indent)\(lead): \(lock), \(verb) \(holder.label), \(holder.activity)")]
        lines.append("\(indent)  stack of \(holder.label):")
        lines.append(contentsOf: shortStack(holder.frames, indent: indent + "  "))
        if let note = holder.stackNote { lines.append("\(indent)  note: \(note)") }
        switch holder.blocker {
        case .lock(let next): lines += lockLines(next, lead: "which waits on", depth: depth + 1)
        case .child(let next): lines += childLines(next, indent: indent + "  ", lead: "which waits for")
        case .descriptor(let next): lines += descriptorLines(next, indent: indent + "  ")
        case nil: break
        }
        return lines
    }

    /// A wait for a child: the child and what it does, or every child for a wait on any.
    func childLines(_ wait: ChildWait, indent: String = "  ", lead: String = "waiting for") -> [String] {
        var lines: [String]
        if wait.children.count == 1, let child = wait.children.first, case .child = wait.target {
            lines = ["\(indent)\(lead): child pid \(child.pid) (\(wait.call)), \(child.activity)"]
            if let command = child.commandLine { lines.append("\(indent)  command: \(command)") }
        } else {
            let count = wait.children.count
            lines = [
                "\(indent)\(lead): \(wait.targetPhrase) (\(wait.call)),"
                    + " \(count) child\(count == 1 ? "" : "ren")\(count == 0 ? "" : ":")"
            ]
            for child in wait.children {
                let command = child.commandLine.map { " `\($0)`" } ?? ""
                lines.append("\(indent)  pid \(child.pid)\(command): \(child.activity)")
            }
        }
        if let note = wait.note { lines.append("\(indent)  note: \(note)") }
        return lines
    }

    /// A stack cut to ``holderFramesShown`` frames, with how many more there were.
    func shortStack(_ frames: [Frame], indent: String) -> [String] {
        guard !frames.isEmpty else { return ["\(indent)  (no stack captured)"] }
        var lines = stack(Array(frames.prefix(Self.holderFramesShown))).map { indent + $0 }
        if frames.count > Self.holderFramesShown {
            lines.append("\(indent)   ... \(frames.count - Self.holderFramesShown) more frames")
        }
        return lines
    }
}
