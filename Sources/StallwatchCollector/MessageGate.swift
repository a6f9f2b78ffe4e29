// What an agent's message may claim: the workload, its binaries and its messages are untrusted input to a
// collector that often runs as root.
import StallwatchCore

/// Admits an agent's message only as far as the kernel vouches for it.
///
/// The pid a message names is the agent's word; the kernel's record of which process sent the datagram
/// (`SO_PASSCRED`) is not. Every pid in an admitted message is the sender's (which also turns a containerised
/// agent's own pid-namespace numbers into ours), every thread is one of the sender's threads, and times that no
/// agent could have read from the monotonic clock are refused. So a workload can only ever make stallwatch sample
/// itself.
struct MessageGate {
    /// Whether the sending process may be watched at all (under `run`, a descendant of stallwatch; under `attach`,
    /// the attached process).
    let isWatchable: (Int32) -> Bool
    /// The sender's thread a message's thread id means (the id is in the sender's pid namespace), or nil if the
    /// sender has no such thread.
    let threadOf: (_ pid: Int32, _ agentThread: Int32, _ agentPid: Int32) -> Int32?
    /// How far ahead of the collector's clock a time may be (the agent reads the same clock, moments earlier or
    /// later).
    static let clockSlack: UInt64 = 1_000_000_000
    /// Longest text kept from an agent (a refusal's reason).
    static let longestText = 500

    /// The message as the sender may say it, or nil to drop it.
    func admit(_ message: AgentMessage, sender: Int32, now: UInt64) -> AgentMessage? {
        guard sender > 0, isWatchable(sender) else { return nil }
        switch message {
        case .loaded(_, let version):
            return .loaded(pid: sender, agentVersion: String(version.prefix(Self.longestText)))
        case .refused(_, let reason):
            return .refused(pid: sender, reason: String(reason.prefix(Self.longestText)))
        case .mainUnwatched:
            return .mainUnwatched(pid: sender)
        case .watching(let pid, let tid, let strategy):
            guard let thread = threadOf(sender, tid, pid) else { return nil }
            return .watching(pid: sender, tid: thread, strategy: strategy)
        case .stallBegan(let pid, let tid, let onset):
            guard onset.start <= onset.detectedAt, onset.detectedAt <= now &+ Self.clockSlack,
                let thread = threadOf(sender, tid, pid)
            else { return nil }
            return .stallBegan(pid: sender, tid: thread, onset: onset)
        case .stallSample(let pid, let tid, let identifier, let index):
            guard let thread = threadOf(sender, tid, pid) else { return nil }
            return .stallSample(pid: sender, tid: thread, identifier: identifier, index: index)
        case .stallEnded(_, let identifier, let endedAt):
            guard endedAt <= now &+ Self.clockSlack else { return nil }
            return .stallEnded(pid: sender, identifier: identifier, endedAt: endedAt)
        case .busyPeriods(_, let buckets, let longest):
            return .busyPeriods(pid: sender, buckets: buckets, maxNanoseconds: longest)
        case .inProcessSample(_, let identifier, let addresses, let callers, let capturedAt, let imageMap, let error):
            guard capturedAt <= now &+ Self.clockSlack else { return nil }
            // Callers after a frame the stack does not have, or more than a walk finds, are not the agent's.
            let plausible = callers.flatMap { found -> AsyncCallersFound? in
                guard addresses.indices.contains(found.nativeFrame),
                    found.walk.resumePoints.count <= AsyncChain.maxLinks
                else { return nil }
                var kept = found
                kept.walk.error = found.walk.error.map { String($0.prefix(Self.longestText)) }
                return kept
            }
            return .inProcessSample(
                pid: sender, identifier: identifier, addresses: addresses, asyncCallers: plausible,
                capturedAt: capturedAt, imageMap: imageMap,
                error: error.map { String($0.prefix(Self.longestText)) })
        case .frameRate(_, let start, let end, let frames, let dropped):
            guard start <= end, end <= now &+ Self.clockSlack, frames >= 0 else { return nil }
            return .frameRate(pid: sender, start: start, end: end, frames: frames, droppedNanoseconds: dropped)
        case .frameDrops(_, let begin, let end, let total, let dropped):
            guard begin <= end, end <= now &+ Self.clockSlack else { return nil }
            return .frameDrops(
                pid: sender, begin: begin, end: end, totalNanoseconds: total, droppedNanoseconds: dropped)
        }
    }
}
