// Reading a stall's samples: which frame dominated, which callout it was, a fingerprint, how sure we are.

extension StallReport {
    /// The deepest user-written frame present in most samples: what the stall spent its time in.
    ///
    /// A single capture shows whatever ran at that instant (the complaint about one-shot hang detectors);
    /// over several samples, a function that ran for most of the stall appears in most of them. Among the
    /// application frames found in more than half the samples, the most deeply nested wins: in a stall made
    /// of A for 400 ms then B for 80 ms, both under C, C and A qualify and A is deeper. With no majority
    /// (every sample elsewhere), the innermost application frame of the first sample stands in.
    public var dominantFrame: Frame? {
        guard samples.count > 1 else { return culprit }
        var presence: [String: (count: Int, depth: Int, frame: Frame)] = [:]
        let userWritten = hasUserWrittenFrames
        for sample in samples {
            var seen: Set<String> = []
            for (index, frame) in sample.frames.enumerated()
            where userWritten ? UserCode.isUserWritten(frame) : ImageClassifier.isApplicationFrame(frame) {
                guard let symbol = frame.symbol, seen.insert(symbol).inserted else { continue }
                let depth = sample.frames.count - index
                let entry = presence[symbol] ?? (0, depth, frame)
                presence[symbol] = (entry.count + 1, max(entry.depth, depth), entry.frame)
            }
        }
        let majority = presence.values.filter { $0.count * 2 > samples.count }
        let best = majority.max { ($0.depth, $0.count) < ($1.depth, $1.count) }
        return best?.frame ?? culprit
    }

    /// The kind of callout the stall happened in, from the first sample that shows one; under the ping
    /// strategy (no run loop) the stalled work is by definition a main-queue block.
    public var callout: CalloutKind? {
        samples.lazy.compactMap { CalloutKind(frames: $0.frames) }.first ?? (phase == .mainQueue ? .mainQueue : nil)
    }

    /// A stable identity for "the same stall": the dominant frame and up to two user-written callers, by name
    /// (not address, so it survives a rebuild), plus the callout kind. 16 hex digits.
    ///
    /// A stall seen from outside (`attach --mode external`, the kernel trace), or whose dominant frame has no source location, is
    /// likely an interpreter's or a runtime's (python3, a VM), whose C function is the same for every script-level
    /// stall: there every caller of the program's image counts, by name, runs of one name (recursion, the eval loop re-entered) counted once, so stalls that
    /// reach it by different paths differ.
    public var fingerprint: String {
        var parts = [callout?.rawValue ?? "-"]
        // The same slow handler on two threads of one pool is one problem; on the main thread and a pool, two.
        if let threadRole { parts.append("thread " + threadRole) }
        if let dominant = dominantFrame?.symbol,
            let sample = samples.first(where: { $0.frames.contains { $0.symbol == dominant } }),
            let index = sample.frames.firstIndex(where: { $0.symbol == dominant })
        {
            let dominantFrame = sample.frames[index]
            let seenFromOutside =
                attached?.mode.knowsLoopPhase == false || (dominantFrame.file == nil && dominantFrame.line == nil)
            let callers = sample.frames[index...].filter {
                (seenFromOutside ? ImageClassifier.isApplicationFrame($0) : isCandidate($0)) && !$0.inlined
            }.compactMap(\.symbol)
            // The optimizer's prefixes change with build settings, not with the code: leave them out; so does which of an
            // async function's partial functions ran. The callers include its async callers, which tell apart stalls
            // in one helper awaited from different places.
            let names = callers.map(AsyncFunction.logicalName).map {
                $0.hasPrefix("specialized ") ? String($0.dropFirst(12)) : $0
            }
            if seenFromOutside {
                parts += names.enumerated().filter { $0.offset == 0 || names[$0.offset - 1] != $0.element }.map(
                    \.element)
            } else {
                parts += names.prefix(3)
            }
        } else {
            parts.append(phase.name)
        }
        return Fingerprint.hex(of: parts.joined(separator: "\n"))
    }

    /// How late the watcher declared the stall, past the moment it was due (`count` × `threshold` after its
    /// start).
    public var watcherLateness: UInt64 {
        // Overflow-checked: the times come from the watched process.
        let (wait, waitOverflow) = thresholdNanoseconds.multipliedReportingOverflow(by: UInt64(max(0, count)))
        let (due, dueOverflow) = start.addingReportingOverflow(wait)
        guard !waitOverflow, !dueOverflow else { return 0 }
        return detectedAt > due ? detectedAt - due : 0
    }

    /// A caution when the watcher woke much later than due: the whole process was probably stopped
    /// (SIGSTOP, a debugger) or starved of CPU, so the loop may not be to blame.
    public var confidenceNote: String? {
        // A stopped thread (state T, not stallwatch's own ptrace stop, t) was stopped by a signal or a debugger.
        if samples.contains(where: { $0.threadState?.state == "T" }) {
            return "the process was stopped (SIGSTOP, SIGTSTP or a debugger) during the stall, so part of its length"
                + " is not the program's doing"
        }
        let lateness = watcherLateness
        guard lateness > max(thresholdNanoseconds, 50_000_000) else { return nil }
        let milliseconds = lateness / 1_000_000
        return "the watcher woke \(milliseconds) ms late: the process was probably stopped (SIGSTOP, a debugger)"
            + " or starved of CPU, so part of this stall may not be the program's doing"
    }
}

/// FNV-1a, 64 bits: a short, stable, dependency-free hash for fingerprints (not for security).
enum Fingerprint {
    static func hex(of text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
