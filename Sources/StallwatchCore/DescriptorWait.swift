// A thread blocked on one file descriptor: what the descriptor is (a pipe, a socket, a file, an eventfd) and the
// processes at its other end, named from /proc.

/// A thread blocked in `read`, `write`, `recvfrom`, `recvmsg`, `sendto`, `sendmsg`, `poll` or `ppoll` on one
/// descriptor, and what is known of the descriptor and of the processes at its other end.
public struct DescriptorWait: Equatable, Sendable {
    /// The system call (`read`, `recvfrom`, `poll`).
    public var call: String
    public var descriptor: Int32
    /// What `/proc/PID/fd/N` links to (`pipe:[12345]`, `socket:[678]`, a path); nil when it could not be read.
    public var target: String?
    public var object: DescriptorObject
    /// The processes holding the other end of a pipe or FIFO, or the peer of a socket (at most
    /// ``DescriptorWait/maximumPeers``).
    public var peers: [PeerProcess]
    /// What is unknown (the search was cut short, permission was missing, no peer could be found).
    public var note: String?

    public init(
        call: String, descriptor: Int32, target: String?, object: DescriptorObject, peers: [PeerProcess] = [],
        note: String? = nil
    ) {
        self.call = call
        self.descriptor = descriptor
        self.target = target
        self.object = object
        self.peers = peers
        self.note = note
    }

    /// Peer processes listed at most.
    public static let maximumPeers = 8

    /// "reading", "writing", "polling": what the call does with the descriptor.
    public var verb: String {
        switch call {
        case "write", "writev", "pwrite64", "sendto", "sendmsg": "writing"
        case "poll", "ppoll": "polling"
        default: "reading"
        }
    }

    /// Who the peers are to it: the other end of a pipe, the peer of a socket.
    public var peerRole: String {
        switch object {
        case .pipe, .fifo: "the other end is held by"
        default: "the peer is"
        }
    }
}

/// What a descriptor refers to, from its `/proc/PID/fd/N` link and, for sockets, `/proc/PID/net/*`.
public enum DescriptorObject: Equatable, Sendable {
    /// An anonymous pipe (`pipe:[INODE]`).
    case pipe(inode: UInt64)
    /// A named pipe, by its path.
    case fifo(path: String)
    /// A Unix socket: its bound path where it has one, and its peer's inode where `sock_diag` told it.
    case unixSocket(inode: UInt64, path: String?, peerInode: UInt64?)
    /// A TCP or UDP socket.
    case inetSocket(InetSocket)
    /// A socket found in none of the tables read (netlink, packet, or one gone meanwhile).
    case socket(inode: UInt64)
    /// A regular file or device, by its path.
    case file(path: String)
    /// An `anon_inode` descriptor: `eventfd`, `timerfd`, `signalfd`, `[eventpoll]`, …, by kind.
    case anonymous(kind: String)
    /// A link that could not be read or placed.
    case unknown

    /// The record's `object`: `pipe`, `fifo`, `unixSocket`, `tcp`, `udp`, `socket`, `file`, `anonymous`, `unknown`.
    public var kind: String {
        switch self {
        case .pipe: "pipe"
        case .fifo: "fifo"
        case .unixSocket: "unixSocket"
        case .inetSocket(let socket): socket.transport
        case .socket: "socket"
        case .file: "file"
        case .anonymous: "anonymous"
        case .unknown: "unknown"
        }
    }

    /// How reports name it: `pipe:[12345]`, `FIFO /tmp/f`, `TCP 127.0.0.1:40012 -> 127.0.0.1:8080 (ESTABLISHED)`.
    public var phrase: String {
        switch self {
        case .pipe(let inode): "pipe:[\(inode)]"
        case .fifo(let path): "FIFO \(path)"
        case .unixSocket(let inode, let path, _): "Unix socket " + (path.map { "\($0) " } ?? "") + "(socket:[\(inode)])"
        case .inetSocket(let socket): socket.phrase
        case .socket(let inode): "socket:[\(inode)]"
        case .file(let path): "file \(path)"
        case .anonymous(let kind): "an \(kind)"
        case .unknown: "an unknown descriptor"
        }
    }
}

/// A TCP or UDP socket as `/proc/net/{tcp,tcp6,udp,udp6}` lists it.
public struct InetSocket: Equatable, Sendable {
    /// `tcp` or `udp` (the table's name without its 6).
    public var transport: String
    public var local: SocketAddress
    public var remote: SocketAddress
    /// `ESTABLISHED`, `LISTEN`, … (TCP's state names, also for UDP's table).
    public var state: String
    public var inode: UInt64

    public init(transport: String, local: SocketAddress, remote: SocketAddress, state: String, inode: UInt64) {
        self.transport = transport
        self.local = local
        self.remote = remote
        self.state = state
        self.inode = inode
    }

    /// `TCP 127.0.0.1:40012 -> 127.0.0.1:8080 (ESTABLISHED)`.
    public var phrase: String {
        "\(transport.uppercased()) \(local.text) -> \(remote.text) (\(state))"
    }
}

/// An IPv4 or IPv6 address and port.
public struct SocketAddress: Hashable, Sendable {
    /// `127.0.0.1`, `::1`, `::ffff:10.0.0.1`.
    public var host: String
    public var port: UInt16
    /// The address's bytes in network order (4 or 16).
    public var bytes: [UInt8]

    public init(host: String, port: UInt16, bytes: [UInt8]) {
        self.host = host
        self.port = port
        self.bytes = bytes
    }

    /// `127.0.0.1:8080`, `[::1]:8080`.
    public var text: String { bytes.count == 16 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// 127.0.0.0/8, `::1`, or an IPv4-mapped loopback.
    public var isLoopback: Bool {
        if bytes.count == 4 { return bytes[0] == 127 }
        if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
        return bytes.count == 16 && bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
            && bytes[12] == 127
    }

    /// `0.0.0.0` or `::`: a socket bound to every address.
    public var isUnspecified: Bool { bytes.allSatisfy { $0 == 0 } }

    /// The IPv4 address an IPv4-mapped IPv6 one carries, or the address itself: to compare across the tables.
    public var unmapped: [UInt8] {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return Array(bytes[12...])
        }
        return bytes
    }
}

/// A process at the other end of a descriptor: who, which of its descriptors, and what its threads do.
public struct PeerProcess: Equatable, Sendable {
    public var pid: Int32
    /// `/proc/PID/comm`.
    public var name: String?
    /// `/proc/PID/cmdline`, cut as a child's is.
    public var commandLine: String?
    /// Its main thread's state.
    public var state: ThreadState?
    /// Its descriptors on the object, and which end each is where fdinfo's flags tell.
    public var descriptors: [PeerDescriptor]
    /// Its threads (at most ``PeerProcess/maximumThreads``) and the call each is in.
    public var threads: [PeerThread]

    public init(
        pid: Int32, name: String?, commandLine: String?, state: ThreadState?, descriptors: [PeerDescriptor],
        threads: [PeerThread] = []
    ) {
        self.pid = pid
        self.name = name
        self.commandLine = commandLine
        self.state = state
        self.descriptors = descriptors
        self.threads = threads
    }

    public static let maximumThreads = 8

    /// "sleeping in clock_nanosleep", "running": what its main thread does.
    public var activity: String {
        ChildProcess(pid: pid, name: name, commandLine: commandLine, state: state).activity
    }

    /// `pid 4321 (writer)`.
    public var label: String { "pid \(pid)" + (name.map { " (\($0))" } ?? "") }
}

/// One descriptor of a peer process on the object.
public struct PeerDescriptor: Equatable, Sendable {
    public var descriptor: Int32
    /// `read`, `write` or `read/write` from fdinfo's access mode; nil where unreadable.
    public var end: String?

    public init(descriptor: Int32, end: String?) {
        self.descriptor = descriptor
        self.end = end
    }
}

/// A thread of a peer process and what it was doing.
public struct PeerThread: Equatable, Sendable {
    public var tid: Int32
    public var name: String?
    public var state: ThreadState?

    public init(tid: Int32, name: String?, state: ThreadState?) {
        self.tid = tid
        self.name = name
        self.state = state
    }
}

extension DescriptorWait {
    /// "blocked reading pipe:[12345]; the other end is held by pid 4321 (writer), sleeping in clock_nanosleep".
    public var summary: String {
        let line = "blocked \(verb) \(object.phrase) (fd \(descriptor))"
        guard let peer = peers.first else { return line + (note.map { "; \($0)" } ?? "") }
        let more = peers.count > 1 ? " and \(peers.count - 1) more" : ""
        return line + "; \(peerRole) \(peer.label), \(peer.activity)\(more)"
    }
}
