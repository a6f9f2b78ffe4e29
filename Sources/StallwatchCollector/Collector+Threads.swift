// The collector's `--thread` side: which stalls the selectors keep, and the threads it watches from /proc itself.
import StallwatchCore

extension Collector {
    /// Starts watching the selected threads of `pid` from `/proc`, but for the main thread when its agent watches it.
    func watchThreads(of pid: Int32, agentWatchesMain: Bool) {
        // `--source agent`: what the agent cannot watch is not watched.
        guard settings.source != .agent else { return }
        var selectors = settings.threads
        // The agent watches the main run loop; `main` alone then leaves nothing to watch from /proc.
        if agentWatchesMain { selectors.removeAll { $0 == .main } }
        guard !selectors.isEmpty else { return }
        // Under an agent, its stalls are numbered from 1: the ones found from /proc are numbered apart.
        threadWatches[pid] = ThreadWatchSet(
            pid: pid, selectors: selectors, settings: settings, excluding: agentWatchesMain ? [pid] : [],
            identifiers: StallIdentifiers(after: agentWatchesMain ? Self.procStallNumbersAfter : 0),
            trace: outsideTrace(), now: monotonicNow())
    }

    /// The trace for threads watched from outside: opened the first time one is, under `auto` and `kernel`; nil where
    /// it cannot be had (then `/proc` is sampled, and ``traceWarning`` says why).
    func outsideTrace() -> KernelTrace? {
        if !traceTried {
            traceTried = true
            switch settings.source {
            case .auto, .kernel:
                switch KernelTrace.open() {
                case .success(let opened): trace = opened
                case .failure(let unavailable): traceWarning = KernelTrace.fallbackWarning(unavailable)
                }
            case .agent, .proc: break
            }
        }
        return trace
    }

    /// How long a process may go without the agent watching its main loop before stallwatch looks for its event loops
    /// itself: a program `run` starts sets its loops up first; a running process `attach`ed to shows its main loop
    /// within a few readings.
    var loopSearchGrace: UInt64 {
        target.attachedPid == nil ? 1_000_000_000 : max(4 * settings.thresholdNanoseconds, 250_000_000)
    }

    /// With the default selection (`--thread main`), plans to look for `pid`'s event loops if its main loop is not
    /// watched soon: a server whose main thread only waits (SwiftNIO), a C or static-stdlib program the agent cannot
    /// watch inside.
    func scheduleLoopSearch(of pid: Int32, now: UInt64) {
        guard settings.threads.isMainOnly, settings.source != .agent, loopSearchDue[pid] == nil,
            !loopsSearched.contains(pid)
        else { return }
        loopSearchDue[pid] = now + loopSearchGrace
    }

    /// Starts watching every event-loop thread of the processes whose main loop no agent watches by now.
    func searchLoops(now: UInt64) {
        for (pid, due) in loopSearchDue where now >= due {
            loopSearchDue[pid] = nil
            // Watched already: by the agent, or (attach from outside) a main thread seen resting in its loop.
            guard strategies[pid] == nil, threadWatches[pid]?.watchesLoop(tid: pid) != true,
                ThreadInspector.statFields(pid: pid, tid: pid) != nil
            else { continue }
            loopsSearched.insert(pid)
            if let watch = threadWatches[pid] {
                watch.addAllThreads()
            } else {
                let watch = ThreadWatchSet(
                    pid: pid, selectors: [], settings: settings,
                    identifiers: StallIdentifiers(after: loadedPids.contains(pid) ? Self.procStallNumbersAfter : 0),
                    trace: outsideTrace(), now: now)
                watch.addAllThreads()
                threadWatches[pid] = watch
            }
        }
    }

    /// Says in one line which event loops stallwatch found and watches for a process whose main loop nothing watched.
    func announceLoopsFound() {
        for pid in loopsFound.keys.sorted() {
            guard let found = loopsFound.removeValue(forKey: pid), !found.isEmpty else { continue }
            let how = threadWatches[pid]?.mode(of: pid) == .kernel ? "through the kernel trace" : "from /proc"
            let shown = found.prefix(4).joined(separator: ", ") + (found.count > 4 ? ", …" : "")
            output.notice(
                "watching \(found.count) event-loop thread\(found.count == 1 ? "" : "s") of pid \(pid) \(how): \(shown)"
                    + "; --thread chooses others")
        }
    }

    /// Stall numbers of threads watched from `/proc` beside an agent start after this.
    static var procStallNumbersAfter: Int { 1000 }

    /// Whether a stall of `tid` is one the user asked for.
    func isSelected(pid: Int32, tid: Int32, fromProc: Bool, onset: StallOnset) -> Bool {
        if fromProc { return true }
        // A main-queue ping's thread is whichever worker served it: the stall is the main thread's.
        let thread = onset.phase == .mainQueue ? pid : tid
        let name = ThreadInspector.name(pid: pid, tid: thread)
        return settings.threads.matches(tid: thread, name: name, pid: pid)
    }

    func stepThreadWatches(now: UInt64) {
        for pid in threadWatches.keys.sorted() {
            guard let watch = threadWatches[pid], now >= watch.nextWake else { continue }
            for message in watch.step(now: now) { handle(message, fromProc: true) }
            noteUnmatched(watch.unmatchedSelectors(at: now), pid: pid, final: false)
        }
    }

    /// At the watch's end: ends the stalls of threads that exited on their own, says which selectors never matched.
    func finishThreadWatches(now: UInt64) {
        for pid in threadWatches.keys.sorted() {
            // Other stalls still in progress stay unfinished, as the agent's do when a watch ends.
            guard let watch = threadWatches[pid] else { continue }
            if target.threadsExitedOnTheirOwn(pid: pid) {
                for message in watch.endExitedThreads(now: now) { handle(message, fromProc: true) }
            }
            noteUnmatched(watch.unmatchedSelectors, pid: pid, final: true)
        }
    }

    /// Says once per selector that it matched nothing: not an error, since threads may appear later.
    private func noteUnmatched(_ selectors: [ThreadSelector], pid: Int32, final: Bool) {
        for selector in selectors where reportedUnmatched.insert(selector.description).inserted {
            output.notice(
                "--thread '\(selector)' matches no thread of pid \(pid)"
                    + (final ? "" : " yet; threads that appear later are picked up"))
        }
    }

    /// The threads picked but never watched as event loops, for the summary: a sentence each, those that exited
    /// counted in one when there are many.
    var unwatchedThreadNotes: [String] {
        threadWatches.keys.sorted().flatMap { threadWatches[$0]?.unwatchedNotes ?? [] }
    }
}
