// Stalled time by what the stalled threads waited for: locks held by one thread in one function, a child process,
// a deadlock, a pipe or socket and the process at its other end. "72 % of stall time waiting on locks held by thread
// `db-writer` in `Store.flush`".
import StallwatchCore

/// The stalls that waited on the same thing, and the share of all stalled time they make.
public struct BlockerGroup: Sendable, Equatable {
    /// What they waited on, as reports say it: "locks held by thread `db-writer` in `Store.flush`".
    public var label: String
    /// Indices into ``StallCollection/stalls``.
    public var stalls: [Int]
    public var totalMs: Double
    /// Of all stalled time in the collection, 0–1.
    public var share: Double

    /// The groups, most stalled time first (ties by label); stalls with no blocker recorded are in none.
    public static func groups(of collection: StallCollection) -> [BlockerGroup] {
        let everything = collection.stalls.reduce(0) { $0 + $1.knownDurationMs }
        var order: [String] = []
        var members: [String: [Int]] = [:]
        for (index, stall) in collection.stalls.enumerated() {
            guard let blocker = stall.blocker else { continue }
            let label = label(of: blocker, in: collection)
            if members[label] == nil { order.append(label) }
            members[label, default: []].append(index)
        }
        let groups = order.map { label in
            let stalls = members[label] ?? []
            let total = stalls.reduce(0) { $0 + collection.stalls[$1].knownDurationMs }
            return BlockerGroup(
                label: label, stalls: stalls, totalMs: total, share: everything > 0 ? total / everything : 0)
        }
        return groups.sorted { ($0.totalMs, $1.label) > ($1.totalMs, $0.label) }
    }

    /// How a descriptor's `object` reads in a group's label.
    static let objectPhrase = [
        "pipe": "pipes", "fifo": "FIFOs", "unixSocket": "Unix sockets", "tcp": "TCP connections",
        "udp": "UDP sockets", "socket": "sockets", "file": "file I/O", "anonymous": "eventfd-like descriptors",
        "unknown": "descriptors",
    ]

    /// "locks held by thread `db-writer` in `Store.flush`", "a deadlock", "child process `sleep 5`",
    /// "condition variables (no owner)", "pipes to process `writer --slow`".
    static func label(of blocker: StallCollection.Blocker, in collection: StallCollection) -> String {
        if blocker.deadlock { return "a deadlock (threads waiting on each other's locks)" }
        switch blocker.kind {
        case "lock":
            let kind = blocker.lockKind.flatMap(LockKind.init(rawValue:)) ?? .futex
            guard let name = blocker.holderName ?? blocker.holderTid.map({ "tid \($0)" }) else {
                return "\(kind.phrase)s with no owner named"
            }
            let verb = kind == .threadJoin ? "joins of" : "locks held by"
            let stack = blocker.holderStack.map { collection.frames(ofStack: $0) } ?? []
            let culprit =
                stack.first(where: UserCode.isUserWritten) ?? stack.first(where: ImageClassifier.isApplicationFrame)
            return "\(verb) thread `\(name)`" + (culprit.map { " in `\($0.displayName)`" } ?? "")
        case "child":
            return "child process" + (blocker.childCommand.map { " `\(String($0.prefix(80)))`" } ?? "es")
        case "descriptor":
            let object = blocker.descriptorObject.map { objectPhrase[$0] ?? $0 } ?? "descriptors"
            guard let command = blocker.childCommand else { return object + " with no peer named" }
            return object + " to process `\(String(command.prefix(80)))`"
        default:
            return blocker.summary.isEmpty ? blocker.kind : blocker.summary
        }
    }
}
