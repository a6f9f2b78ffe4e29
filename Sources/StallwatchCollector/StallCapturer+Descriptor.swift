// What a thread blocked on one descriptor waits for: the object (pipe, FIFO, socket, file, eventfd) and the processes
// at its other end, found with one scan of every process's descriptors per stall.
import StallwatchCore
import StallwatchImages

extension StallCapturer {
    /// The search for a descriptor's peers (the socket tables, then the scan of every process's descriptors) stops
    /// after this long: a host with very many descriptors gets a note, not a stalled collector.
    static let peerSearchBudget: UInt64 = 50_000_000

    /// The descriptor a thread of `pid` is blocked on in `call`, and who is at its other end; nil for a call on no
    /// descriptor or on several (`poll` with more than one).
    static func descriptorWait(pid: Int32, call: SyscallReading, memory: ProcessMemory) -> DescriptorWait? {
        let started = monotonicNow()
        let name = call.name ?? "read"
        let descriptor: Int32
        if let direct = call.descriptor {
            descriptor = direct
        } else if let address = call.singlePollAddress {
            // struct pollfd { int fd; short events; short revents; }: the descriptor is the low half of its word.
            guard let word = try? memory.word(at: address) else {
                return DescriptorWait(
                    call: name, descriptor: -1, target: nil, object: .unknown,
                    note: "its pollfd could not be read from the process's memory")
            }
            descriptor = Int32(truncatingIfNeeded: word)
            guard descriptor >= 0 else { return nil }
        } else {
            return nil
        }
        guard let link = ThreadInspector.descriptorLink(pid: pid, descriptor: descriptor) else {
            return DescriptorWait(
                call: name, descriptor: descriptor, target: nil, object: .unknown,
                note: "its descriptor could not be read (closed, or permission missing)")
        }
        var wait = DescriptorWait(call: name, descriptor: descriptor, target: link, object: .unknown)
        var peerLinks: [String] = []
        switch DescriptorLink(link: link) {
        case .pipe(let inode):
            wait.object = .pipe(inode: inode)
            peerLinks = [link]
        case .path(let path):
            let isFIFO = ThreadInspector.descriptorIsFIFO(pid: pid, descriptor: descriptor)
            wait.object = isFIFO ? .fifo(path: path) : .file(path: path)
            if isFIFO { peerLinks = [link] }
        case .anonymous(let kind):
            wait.object = .anonymous(kind: kind)
        case .socket(let inode):
            (wait.object, peerLinks, wait.note) = socket(inode: inode, pid: pid)
        case nil:
            wait.note = "its link names nothing stallwatch knows"
        }
        guard !peerLinks.isEmpty else { return wait }
        // The socket tables' time counts against the same budget: the whole search stays within it.
        let spent = min(monotonicNow() - started, peerSearchBudget)
        var scan = ThreadInspector.holders(of: Set(peerLinks), near: pid, budget: peerSearchBudget - spent)
        scan.nanoseconds += spent
        // The first link that has holders: the connected peer before a listener.
        let holders =
            peerLinks.lazy.map { (scan.holders[$0] ?? []).filter { $0.pid != pid || $0.descriptor != descriptor } }
            .first { !$0.isEmpty } ?? []
        let isPipe = wait.object.kind == "pipe" || wait.object.kind == "fifo"
        wait.peers = peers(holders, ends: isPipe)
        var notes = [wait.note, scan.note].compactMap { $0 }
        if wait.peers.isEmpty, !scan.cutShort {
            notes.append(isPipe ? "no other descriptor holds its other end" : "no process holding its peer was found")
        }
        let pids = Set(holders.map(\.pid))
        if pids.count > DescriptorWait.maximumPeers {
            notes.append("\(pids.count - DescriptorWait.maximumPeers) more processes not listed")
        }
        wait.note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        return wait
    }

    /// A socket from the process's own tables: TCP or UDP with its addresses and, when the remote end is on this
    /// host, the links of the sockets that may be its peer; or a Unix socket with its path and peer.
    private static func socket(inode: UInt64, pid: Int32) -> (DescriptorObject, [String], String?) {
        // The Unix and UDP tables first: the kernel lists them in well under a millisecond, while each TCP table
        // walks the whole connection hash (about 4 ms each on a small VM).
        if let unix = ThreadInspector.socketTable(pid: pid, name: "unix").map(SocketTables.unix), let path = unix[inode]
        {
            guard let peer = UnixSocketDiagnosis.peer(of: inode) else {
                return (
                    .unixSocket(inode: inode, path: path, peerInode: nil), [],
                    "its peer could not be found (sock_diag gave none: not connected, or unix_diag unavailable)"
                )
            }
            return (.unixSocket(inode: inode, path: path, peerInode: peer), ["socket:[\(peer)]"], nil)
        }
        for transport in ["udp", "tcp"] {
            // Both families: an IPv4 peer may be a v4-mapped socket of the IPv6 table.
            let sockets = ["", "6"].flatMap { suffix in
                ThreadInspector.socketTable(pid: pid, name: transport + suffix).map {
                    SocketTables.inet($0, transport: transport)
                } ?? []
            }
            guard let own = sockets.first(where: { $0.inode == inode }) else { continue }
            let peers = SocketTables.localPeers(of: own, among: sockets)
            let note =
                own.remote.isUnspecified || !peers.isEmpty
                ? nil : "the remote end is not a socket of this host's network namespace"
            return (.inetSocket(own), peers.map { "socket:[\($0.inode)]" }, note)
        }
        return (
            .socket(inode: inode), [],
            "it is in none of the TCP, UDP or Unix socket tables (or they were unreadable or over 8 MiB)"
        )
    }

    /// The processes behind `holders`: who, their descriptors on the object (with the end each holds), what their
    /// threads do.
    private static func peers(_ holders: [DescriptorHolders.Holder], ends: Bool) -> [PeerProcess] {
        var order: [Int32] = []
        var descriptors: [Int32: [PeerDescriptor]] = [:]
        for holder in holders {
            if descriptors[holder.pid] == nil { order.append(holder.pid) }
            let end = ends ? ThreadInspector.descriptorEnd(pid: holder.pid, descriptor: holder.descriptor) : nil
            descriptors[holder.pid, default: []].append(PeerDescriptor(descriptor: holder.descriptor, end: end))
        }
        return order.prefix(DescriptorWait.maximumPeers).map { pid in
            let threads = ThreadInspector.threads(pid: pid).prefix(PeerProcess.maximumThreads).map { tid in
                PeerThread(
                    tid: tid, name: ThreadInspector.name(pid: pid, tid: tid),
                    state: ThreadInspector.state(pid: pid, tid: tid))
            }
            return PeerProcess(
                pid: pid, name: FileBytes.text("/proc/\(pid)/comm")?.trimmingWhitespace(),
                commandLine: ThreadInspector.commandLine(pid: pid), state: ThreadInspector.state(pid: pid, tid: pid),
                descriptors: descriptors[pid] ?? [], threads: Array(threads))
        }
    }
}
