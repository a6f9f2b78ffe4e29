// The parsers that name a descriptor: fd links, fdinfo flags, /proc/net/{tcp,tcp6,udp,unix}, the sock_diag exchange,
// the local peer of a TCP socket; with real lines and with garbage, which must give nothing, never a trap.
import StallwatchCore
import Testing

struct DescriptorParsingTests {
    static let tcp = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:8B9F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2104001 1 0 100 0 0 10 0
           1: 0100007F:9094 0100007F:8B9F 01 00000000:00000000 00:00000000 00000000     0        0 2104002 1 0 20 4 30 10 -1
           2: 0100007F:8B9F 0100007F:9094 01 00000000:00000000 00:00000000 00000000     0        0 2104003 1 0 20 4 30 10 -1
           3: 0202000A:0050 0100000A:C350 01 00000000:00000000 00:00000000 00000000     0        0 2104004 1 0 20 4 30 10 -1
        """

    @Test func tcpLinesGiveAddressesStateAndInode() {
        let sockets = SocketTables.inet(Self.tcp, transport: "tcp")
        #expect(sockets.count == 4, "the header is skipped")
        #expect(
            sockets[0].local.text == "127.0.0.1:35743" && sockets[0].state == "LISTEN" && sockets[0].inode == 2104001)
        #expect(sockets[1].remote.text == "127.0.0.1:35743" && sockets[1].state == "ESTABLISHED")
        #expect(sockets[3].local.text == "10.0.2.2:80" && sockets[3].remote.text == "10.0.0.1:50000")
        #expect(sockets[0].local.isLoopback && !sockets[3].local.isLoopback)
    }

    @Test func tcp6AddressesAreWordsInHostOrder() {
        let line =
            "  0: 00000000000000000000000001000000:1F90 0000000000000000FFFF00000100007F:D431 01 0:0 0:0 0 0 0 77"
        let socket = try? #require(SocketTables.inet(line, transport: "tcp").first)
        #expect(socket?.local.text == "[::1]:8080")
        #expect(socket?.remote.text == "[::ffff:127.0.0.1]:54321")
        #expect(socket?.local.isLoopback == true && socket?.remote.isLoopback == true)
        #expect(socket?.remote.unmapped == [127, 0, 0, 1])
        let global = "0: B80D0120000000000000000001000000:0016 00000000000000000000000000000000:0000 0A 0 0 0 0 0 12"
        #expect(SocketTables.inet(global, transport: "tcp").first?.local.host == "2001:db8::1")
    }

    @Test(arguments: [
        "", "\n\n", "garbage", "0: 0100007F:8B9F", "0: 0100007F:8B9F 00000000:0000 0A 0 0 0 0 0 notanumber",
        "0: 0100007G:8B9F 00000000:0000 0A 0 0 0 0 0 1", "0: 0100007F:18B9F 00000000:0000 0A 0 0 0 0 0 1",
        "0: 0100007F 00000000:0000 0A 0 0 0 0 0 1", "0: 01007F:8B9F 00000000:0000 0A 0 0 0 0 0 1",
        "0: 0100007F:8B9F 00000000:0000 ZZ 0 0 0 0 0 1", "x 0100007F:8B9F 00000000:0000 0A 0 0 0 0 0 1",
        "0: 0100007F:8B9F 00000000:0000 0A 0 0 0 0 0 -1", String(repeating: "0: ", count: 5000),
        "0: \u{0}\u{1}:\u{ff} 0:0 0A 0 0 0 0 0 1",
    ])
    func garbageTCPLinesGiveNothing(_ text: String) {
        #expect(SocketTables.inet(text, transport: "tcp").isEmpty)
    }

    @Test func anUnknownStateIsNamedByNumber() {
        let line = "0: 0100007F:8B9F 00000000:0000 FF 0 0 0 0 0 5"
        #expect(SocketTables.inet(line, transport: "udp").first?.state == "state 255")
    }

    @Test func unixLinesGiveInodesAndPaths() {
        let text = """
            Num       RefCount Protocol Flags    Type St Inode Path
            0000000000000000: 00000002 00000000 00010000 0001 01 21000 /run/a b.sock
            0000000000000000: 00000003 00000000 00000000 0001 03 21001
            0000000000000000: 00000002 00000000 00010000 0001 01 21002 @abstract
            """
        let sockets = SocketTables.unix(text)
        #expect(sockets.count == 3)
        #expect(sockets[21000] == .some("/run/a b.sock"))
        #expect(sockets[21001] == .some(nil))
        #expect(sockets[21002] == .some("@abstract"))
    }

    @Test(arguments: ["", "Num RefCount", "x: 1 2 3 4 5 notanode /p", "0000: 1 2 3", "0000 1 2 3 4 5 6 /p", "\u{0}"])
    func garbageUnixLinesGiveNothing(_ text: String) {
        #expect(SocketTables.unix(text).isEmpty)
    }

    @Test func linksNameTheirObjects() {
        #expect(DescriptorLink(link: "pipe:[12345]") == .pipe(inode: 12345))
        #expect(DescriptorLink(link: "socket:[9]") == .socket(inode: 9))
        #expect(DescriptorLink(link: "anon_inode:[eventfd]") == .anonymous(kind: "eventfd"))
        #expect(DescriptorLink(link: "anon_inode:inotify") == .anonymous(kind: "inotify"))
        #expect(DescriptorLink(link: "/tmp/x (deleted)") == .path("/tmp/x (deleted)"))
        for garbage in ["", "pipe:[", "pipe:[]", "pipe:[-1]", "pipe:[12", "socket:[x]", "anon_inode:", "net:[1]"] {
            #expect(DescriptorLink(link: garbage) == nil, "\(garbage)")
        }
    }

    @Test func fdinfoFlagsGiveTheEnd() {
        #expect(DescriptorAccess.end(fdinfo: "pos:\t0\nflags:\t02000001\nmnt_id:\t15\n") == "write")
        #expect(DescriptorAccess.end(fdinfo: "pos:\t0\nflags:\t0100000\n") == "read")
        #expect(DescriptorAccess.end(fdinfo: "flags:\t02\n") == "read/write")
        for garbage in ["", "flags:", "flags:\t9", "flags:\t-1", "pos: 0", "flags:\t99999999999999999999"] {
            #expect(DescriptorAccess.end(fdinfo: garbage) == nil, "\(garbage)")
        }
    }

    @Test func theLocalPeerIsTheSwappedConnectionThenTheListener() {
        let sockets = SocketTables.inet(Self.tcp, transport: "tcp")
        let client = sockets[1]
        #expect(SocketTables.localPeers(of: client, among: sockets).map(\.inode) == [2104003, 2104001])
        // 10.0.0.1 is no address of this namespace: no listener is taken for it.
        #expect(SocketTables.localPeers(of: sockets[3], among: sockets).isEmpty)
        #expect(SocketTables.localPeers(of: sockets[0], among: sockets).isEmpty, "a listener has no remote")
    }

    @Test func aSockDiagReplyGivesThePeer() {
        let request = UnixPeerQuery.message(inode: 0x1234, sequence: 7)
        #expect(request.count == 40 && request[0] == 40 && request[4] == 20 && request[16] == 1)
        var reply: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { reply += $0 } }
        append(UInt32(40))
        append(UInt16(20))
        append(UInt16(0))
        append(UInt32(7))
        append(UInt32(0))
        reply += [1, 1, 1, 0]
        append(UInt32(0x1234))
        append(UInt32(0))
        append(UInt32(0))
        append(UInt16(8))
        append(UInt16(2))
        append(UInt32(0x5678))
        #expect(UnixPeerQuery.peer(inReply: reply, inode: 0x1234) == 0x5678)
        #expect(UnixPeerQuery.peer(inReply: reply, inode: 0x1235) == nil, "a reply about another socket")
        // Cut anywhere, or with a bad attribute length: nothing.
        for cut in 0..<reply.count {
            #expect(UnixPeerQuery.peer(inReply: Array(reply.prefix(cut)), inode: 0x1234) == nil)
        }
        var bad = reply
        bad[32] = 2
        #expect(UnixPeerQuery.peer(inReply: bad, inode: 0x1234) == nil)
        bad[32] = 0xff
        #expect(UnixPeerQuery.peer(inReply: bad, inode: 0x1234) == nil)
    }

    @Test func pollOnOneDescriptorGivesItsAddressAndReadsGiveTheirDescriptor() {
        let read = SyscallReading(number: 0, arguments: [5, 0x7fff0000, 1, 0, 0, 0])
        #expect(read.waitsOnDescriptor && read.descriptor == 5)
        let negative = SyscallReading(number: 45, arguments: [0xffff_ffff, 0, 0, 0, 0, 0])
        #expect(negative.descriptor == nil)
        let poll = SyscallReading(number: 7, arguments: [0x7fff1000, 1, 100, 0, 0, 0])
        #expect(poll.waitsOnDescriptor && poll.descriptor == nil && poll.singlePollAddress == 0x7fff1000)
        #expect(SyscallReading(number: 271, arguments: [0x7fff1000, 2, 0, 0, 0, 0]).singlePollAddress == nil)
        #expect(!SyscallReading(number: 232, arguments: [3, 0, 0, 0, 0, 0]).waitsOnDescriptor, "epoll_wait")
    }
}
