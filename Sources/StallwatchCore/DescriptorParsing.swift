// Pure parsers for what names a descriptor: its /proc/PID/fd link, fdinfo's flags, the /proc/net socket tables, and a
// sock_diag reply. Every input is untrusted: a line that does not parse is skipped, never trusted in part.

/// The object a `/proc/PID/fd/N` link names, before the socket tables are read.
public enum DescriptorLink: Equatable, Sendable {
    case pipe(inode: UInt64)
    case socket(inode: UInt64)
    /// `anon_inode:[eventfd]`, `anon_inode:inotify`: the kind without brackets.
    case anonymous(kind: String)
    /// A path (a regular file, a device or a FIFO: only `stat` tells which).
    case path(String)

    /// Parses `pipe:[123]`, `socket:[456]`, `anon_inode:[eventfd]`, `/tmp/file`; nil for anything else.
    public init?(link: String) {
        if let inode = Self.inode(in: link, prefix: "pipe:[") {
            self = .pipe(inode: inode)
        } else if let inode = Self.inode(in: link, prefix: "socket:[") {
            self = .socket(inode: inode)
        } else if link.hasPrefix("anon_inode:") {
            var kind = link.dropFirst("anon_inode:".count)
            if kind.hasPrefix("["), kind.hasSuffix("]") { kind = kind.dropFirst().dropLast() }
            guard !kind.isEmpty, kind.count <= 64 else { return nil }
            self = .anonymous(kind: String(kind))
        } else if link.hasPrefix("/") {
            self = .path(link)
        } else {
            return nil
        }
    }

    private static func inode(in link: String, prefix: String) -> UInt64? {
        guard link.hasPrefix(prefix), link.hasSuffix("]") else { return nil }
        return UInt64(link.dropFirst(prefix.count).dropLast())
    }
}

/// fdinfo's `flags:` (octal) as the end of a pipe or FIFO a descriptor holds.
public enum DescriptorAccess {
    /// `read`, `write` or `read/write` from the access mode of `flags:\t0100001`; nil without a valid line.
    public static func end(fdinfo: String) -> String? {
        guard let line = fdinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }) else { return nil }
        guard let field = line.split(whereSeparator: \.isWhitespace).dropFirst().first,
            let flags = UInt32(field, radix: 8)
        else { return nil }
        switch flags & 3 {
        case 0: return "read"
        case 1: return "write"
        case 2: return "read/write"
        default: return nil
        }
    }
}

/// `/proc/net/{tcp,tcp6,udp,udp6}` and `/proc/net/unix`, by inode.
public enum SocketTables {
    /// TCP's states by the number the tables print (`include/net/tcp_states.h`).
    static let tcpStates = [
        1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT", 7: "CLOSE",
        8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING", 12: "NEW_SYN_RECV",
    ]

    /// The sockets of one table (`transport` `tcp` or `udp`): each line
    /// `sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …`, addresses as
    /// the kernel prints them (hex words in host byte order, `:` then the port in hex). Lines that do not parse, the
    /// header among them, are skipped.
    public static func inet(_ text: String, transport: String) -> [InetSocket] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 10, fields[0].hasSuffix(":"),
                let local = address(fields[1]), let remote = address(fields[2]),
                let stateNumber = Int(fields[3], radix: 16), let inode = UInt64(fields[9])
            else { return nil }
            let state = tcpStates[stateNumber] ?? "state \(stateNumber)"
            return InetSocket(transport: transport, local: local, remote: remote, state: state, inode: inode)
        }
    }

    /// `0100007F:1F90` → 127.0.0.1:8080; a 32-digit address is IPv6, four 32-bit words each in host (little-endian)
    /// order.
    static func address(_ field: Substring) -> SocketAddress? {
        let parts = field.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 8 || parts[0].count == 32, let port = UInt16(parts[1], radix: 16)
        else { return nil }
        var bytes: [UInt8] = []
        var word = parts[0][...]
        while !word.isEmpty {
            guard let value = UInt32(word.prefix(8), radix: 16) else { return nil }
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
            word = word.dropFirst(8)
        }
        return SocketAddress(host: hostText(bytes), port: port, bytes: bytes)
    }

    /// `127.0.0.1`, `::1`, `::ffff:127.0.0.1`, `fe80::1`: dotted quad, or eight groups with the longest run of zero
    /// groups written `::`.
    static func hostText(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        if groups[0..<5].allSatisfy({ $0 == 0 }) && groups[5] == 0xffff {
            return "::ffff:" + bytes[12...].map(String.init).joined(separator: ".")
        }
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length && end - index > 1 { best = (index, end - index) }
            index = max(end, index + 1)
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }

    /// The Unix sockets of `/proc/net/unix` by inode, each with its path where it is bound to one: each line
    /// `Num RefCount Protocol Flags Type St Inode [Path]`. An abstract name's leading NUL prints as `@`.
    public static func unix(_ text: String) -> [UInt64: String?] {
        var sockets: [UInt64: String?] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 7, omittingEmptySubsequences: true)
            guard fields.count >= 7, fields[0].hasSuffix(":"), let inode = UInt64(fields[6]) else { continue }
            let path = fields.count > 7 ? String(fields[7].prefix(256)) : nil
            sockets[inode] = path
        }
        return sockets
    }
}

/// The one sock_diag exchange stallwatch makes: asking the kernel for a Unix socket's peer (`UNIX_DIAG_PEER`), the
/// one fact `/proc/net/unix` does not show.
public enum UnixPeerQuery {
    /// `SOCK_DIAG_BY_FAMILY`, `NLM_F_REQUEST`, `AF_UNIX`, `UDIAG_SHOW_PEER`, `UNIX_DIAG_PEER`, `NLMSG_ERROR`.
    static let sockDiagByFamily: UInt16 = 20
    static let request: UInt16 = 1
    static let unixFamily: UInt8 = 1
    static let showPeer: UInt32 = 4
    static let peerAttribute: UInt16 = 2
    static let errorMessage: UInt16 = 2

    /// A `nlmsghdr` and `unix_diag_req` asking for the socket `inode` (no cookie: `INET_DIAG_NOCOOKIE`).
    public static func message(inode: UInt32, sequence: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        append(UInt32(16 + 24))
        append(sockDiagByFamily)
        append(request)
        append(sequence)
        append(UInt32(0))
        append(unixFamily)
        append(UInt8(0))
        append(UInt16(0))
        append(UInt32.max)  // every state
        append(inode)
        append(showPeer)
        append(UInt32.max)
        append(UInt32.max)
        return bytes
    }

    /// The peer inode in a reply to ``message(inode:sequence:)``: nil for an error reply, a reply about another
    /// socket, one without a peer attribute, or bytes that do not parse.
    public static func peer(inReply bytes: [UInt8], inode: UInt32) -> UInt64? {
        func u32(_ offset: Int) -> UInt32? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
        }
        func u16(_ offset: Int) -> UInt16? {
            guard offset >= 0, offset + 2 <= bytes.count else { return nil }
            return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
        }
        guard let length = u32(0), length >= 32, Int(length) <= bytes.count, let type = u16(4),
            type == sockDiagByFamily, u32(20) == inode
        else { return nil }
        // unix_diag_msg is 16 bytes after the 16-byte header; attributes follow, each 4-byte aligned.
        var offset = 32
        while offset + 4 <= Int(length) {
            guard let attributeLength = u16(offset), let attributeType = u16(offset + 2), attributeLength >= 4,
                offset + Int(attributeLength) <= Int(length)
            else { return nil }
            if attributeType == peerAttribute, attributeLength >= 8, let peer = u32(offset + 4) {
                return peer == 0 ? nil : UInt64(peer)
            }
            offset += (Int(attributeLength) + 3) & ~3
        }
        return nil
    }
}

extension SocketTables {
    /// The sockets of `sockets` (one network namespace's tables) that may be `own`'s peer on this host, best first:
    /// the connected socket whose addresses are `own`'s swapped, then a listener on the remote port (a connection
    /// not yet accepted). None when the remote end is unset or elsewhere.
    public static func localPeers(of own: InetSocket, among sockets: [InetSocket]) -> [InetSocket] {
        guard !own.remote.isUnspecified, own.remote.port != 0 else { return [] }
        func same(_ one: SocketAddress, _ other: SocketAddress) -> Bool {
            one.port == other.port && one.unmapped == other.unmapped
        }
        let connected = sockets.filter {
            $0.inode != own.inode && $0.inode != 0 && same($0.local, own.remote) && same($0.remote, own.local)
        }
        let hostAddresses = Set(sockets.map(\.local.unmapped).filter { !$0.allSatisfy { $0 == 0 } })
        let remoteIsLocal = own.remote.isLoopback || hostAddresses.contains(own.remote.unmapped)
        let listening =
            remoteIsLocal
            ? sockets.filter {
                $0.state == "LISTEN" && $0.inode != 0 && $0.local.port == own.remote.port
                    && ($0.local.isUnspecified || $0.local.unmapped == own.remote.unmapped)
            } : []
        return connected + listening
    }
}
