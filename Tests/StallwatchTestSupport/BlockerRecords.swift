// The keys of a stall's `blocker` and of the `deadlock` record (docs/json-schema.md), as tests read them: every key
// decoded with its JSON type, so a missing or mistyped one fails the test that decodes it.

/// `blocker`: what the stalled thread waited for. `kind` says which keys are there: a lock's or a child wait's.
public final class BlockerRecord: Decodable, Equatable, Sendable {
    /// `lock`, `child` or `descriptor`.
    public let kind: String
    public let summary: String
    /// How long finding it took (the top-level blocker only).
    public let searchMs: Nullable<Double>
    // A lock.
    public let lockKind: String?
    public let address: String?
    public let futexOp: String?
    public let holder: Nullable<HolderRecord>
    public let note: Nullable<String>
    // A child wait.
    public let call: String?
    /// `child`, `anyChild`, `processGroup`, `pidfd`.
    public let waitsFor: String?
    public let pid: Nullable<Int>
    public let processGroup: Nullable<Int>
    public let children: [ChildRecord]?
    // A descriptor wait (`call` too).
    public let fd: Int?
    /// `pipe`, `fifo`, `unixSocket`, `tcp`, `udp`, `socket`, `file`, `anonymous`, `unknown`.
    public let object: String?
    public let target: Nullable<String>?
    public let inode: Nullable<Int>?
    public let path: Nullable<String>?
    public let anonKind: Nullable<String>?
    public let socket: Nullable<SocketRecord>?
    public let peerInode: Nullable<Int>?
    public let peers: [PeerRecord]?

    public static func == (left: BlockerRecord, right: BlockerRecord) -> Bool {
        left.kind == right.kind && left.summary == right.summary && left.lockKind == right.lockKind
            && left.address == right.address && left.holder == right.holder && left.children == right.children
            && left.note == right.note && left.peers == right.peers && left.socket == right.socket
    }
}

/// `socket`: a TCP or UDP socket's addresses and state.
public struct SocketRecord: Decodable, Equatable, Sendable {
    public let local: String
    public let remote: String
    public let state: String
}

/// One process at the other end of a descriptor.
public struct PeerRecord: Decodable, Equatable, Sendable {
    public let pid: Int
    public let process: String?
    public let commandLine: String?
    public let threadState: ThreadStateRecord?
    public let doing: String
    public let fds: [PeerDescriptorRecord]
    public let threads: [PeerThreadRecord]
}

public struct PeerDescriptorRecord: Decodable, Equatable, Sendable {
    public let fd: Int
    public let end: String?
}

public struct PeerThreadRecord: Decodable, Equatable, Sendable {
    public let tid: Int
    public let threadName: String?
    public let threadState: ThreadStateRecord?
}

/// `holder`: the thread holding the lock, what it did, its stack, and what it waits for in turn.
public struct HolderRecord: Decodable, Equatable, Sendable {
    public let tid: Int
    public let threadName: String?
    public let closesCycle: Bool
    public let threadState: ThreadStateRecord?
    /// `.null` for a thread closing a cycle (it is described where the chain met it first).
    public let doing: Nullable<String>
    public let frames: [FrameRecord]
    public let stackNote: String?
    public let blocker: Nullable<BlockerRecord>

    public var symbols: [String] { frames.compactMap(\.symbol) }
}

/// One child of a wait for a child.
public struct ChildRecord: Decodable, Equatable, Sendable {
    public let pid: Int
    public let process: String?
    public let commandLine: String?
    public let threadState: ThreadStateRecord?
    public let doing: String
}

/// `{"event":"deadlock", ...}`: threads waiting on each other's locks, written when the cycle is found.
public struct DeadlockRecord: Decodable, Equatable, Sendable {
    public let event: String
    public let schemaVersion: Int
    public let host: String?
    public let pid: Int
    public let process: String
    public let detectedAt: String
    public let detectedMonotonicMs: Double
    public let stallId: Int
    public let summary: String
    public let threads: [DeadlockThreadRecord]
}

/// One thread of a deadlock: the lock it waits on, and the thread holding it.
public struct DeadlockThreadRecord: Decodable, Equatable, Sendable {
    public let tid: Int
    public let threadName: String?
    public let threadState: ThreadStateRecord?
    public let waitsOn: LockRecord
    public let heldBy: Int
    public let frames: [FrameRecord]

    public var symbols: [String] { frames.compactMap(\.symbol) }
}

/// `waitsOn`: a lock's kind and its futex word's address.
public struct LockRecord: Decodable, Equatable, Sendable {
    public let lockKind: String
    public let address: String
}
