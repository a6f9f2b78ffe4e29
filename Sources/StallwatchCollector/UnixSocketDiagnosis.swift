// The peer of a Unix socket, which /proc/net/unix does not show: one sock_diag netlink request (UNIX_DIAG_PEER).
import Glibc
import StallwatchCore

/// Asks the kernel's `unix_diag` for a Unix socket's peer inode.
enum UnixSocketDiagnosis {
    /// `NETLINK_SOCK_DIAG`.
    static let protocolNumber: Int32 = 4

    /// The inode of the socket connected to `inode`; nil when it has none, the socket is in another network
    /// namespace, or `unix_diag` is not available.
    static func peer(of inode: UInt64) -> UInt64? {
        guard let narrow = UInt32(exactly: inode) else { return nil }
        let netlink = Glibc.socket(
            AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), protocolNumber)
        guard netlink >= 0 else { return nil }
        defer { close(netlink) }
        // A kernel that never answers must not hold the collector.
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(netlink, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let message = UnixPeerQuery.message(inode: narrow, sequence: 1)
        // Unconnected, a netlink socket sends to the kernel (port 0).
        let sent = message.withUnsafeBytes { send(netlink, $0.baseAddress, $0.count, 0) }
        guard sent == message.count else { return nil }
        var reply = [UInt8](repeating: 0, count: 8192)
        let count = reply.withUnsafeMutableBytes { recv(netlink, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return UnixPeerQuery.peer(inReply: Array(reply[..<count]), inode: narrow)
    }
}
