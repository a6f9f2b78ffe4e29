// A descriptor blocker as JSON: the object, its socket addresses, and the processes at its other end
// (docs/json-schema.md).
import StallwatchCore

extension JSONLinesReporter {
    /// `{"kind":"descriptor", "call":"read", "fd":3, "object":"pipe", ...}`.
    func descriptorRecord(_ wait: DescriptorWait, summary: String) -> JSONValue {
        var inode: UInt64?
        var path: String?
        var peerInode: UInt64?
        var socket: JSONValue = .null
        switch wait.object {
        case .pipe(let number), .socket(let number): inode = number
        case .fifo(let name), .file(let name): path = name
        case .unixSocket(let number, let name, let peer):
            inode = number
            path = name
            peerInode = peer
        case .inetSocket(let inet):
            inode = inet.inode
            socket = .object([
                ("local", .string(inet.local.text)),
                ("remote", .string(inet.remote.text)),
                ("state", .string(inet.state)),
            ])
        case .anonymous, .unknown: break
        }
        var anonymous: String?
        if case .anonymous(let kind) = wait.object { anonymous = kind }
        return .object([
            ("kind", .string("descriptor")),
            ("summary", .string(summary)),
            ("call", .string(wait.call)),
            ("fd", .int(Int64(wait.descriptor))),
            ("object", .string(wait.object.kind)),
            ("target", .optional(wait.target)),
            ("inode", inode.map { .int(Int64(truncatingIfNeeded: $0)) } ?? .null),
            ("path", .optional(path)),
            ("anonKind", .optional(anonymous)),
            ("socket", socket),
            ("peerInode", peerInode.map { .int(Int64(truncatingIfNeeded: $0)) } ?? .null),
            ("peers", .array(wait.peers.map(peerRecord))),
            ("note", .optional(wait.note)),
        ])
    }

    /// A process at the other end: who, its descriptors on the object and which end each is, its threads.
    func peerRecord(_ peer: PeerProcess) -> JSONValue {
        .object([
            ("pid", .int(Int64(peer.pid))),
            ("process", .optional(peer.name)),
            ("commandLine", .optional(peer.commandLine)),
            ("threadState", peer.state.map(stateRecord) ?? .null),
            ("doing", .string(peer.activity)),
            (
                "fds",
                .array(
                    peer.descriptors.map {
                        .object([("fd", .int(Int64($0.descriptor))), ("end", .optional($0.end))])
                    })
            ),
            (
                "threads",
                .array(
                    peer.threads.map {
                        .object([
                            ("tid", .int(Int64($0.tid))),
                            ("threadName", .optional($0.name)),
                            ("threadState", $0.state.map(stateRecord) ?? .null),
                        ])
                    })
            ),
        ])
    }
}
