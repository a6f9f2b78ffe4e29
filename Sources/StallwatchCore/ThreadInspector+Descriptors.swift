// The /proc reads that name a descriptor and find who else holds its object: the fd link, fdinfo's flags, the
// socket tables of the process's network namespace, and one scan of every process's descriptors.
import FoundationEssentials
import Glibc

extension ThreadInspector {
    /// What `/proc/PID/fd/FD` links to; nil when unreadable (gone, or permission missing).
    public static func descriptorLink(pid: Int32, descriptor: Int32) -> String? {
        readLink("/proc/\(pid)/fd/\(descriptor)")
    }

    /// Whether `/proc/PID/fd/FD` is a FIFO (`stat` follows the link to the object).
    public static func descriptorIsFIFO(pid: Int32, descriptor: Int32) -> Bool {
        var info = stat()
        guard stat("/proc/\(pid)/fd/\(descriptor)", &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFIFO
    }

    /// `read`, `write` or `read/write`: the end of a pipe a descriptor holds, from fdinfo's flags.
    public static func descriptorEnd(pid: Int32, descriptor: Int32) -> String? {
        FileBytes.text("/proc/\(pid)/fdinfo/\(descriptor)").flatMap(DescriptorAccess.end(fdinfo:))
    }

    /// One of the process's socket tables (`tcp`, `tcp6`, `udp`, `udp6`, `unix`) as its network namespace has it;
    /// nil when unreadable or larger than `limit` bytes.
    public static func socketTable(pid: Int32, name: String, limit: Int = 8 << 20) -> String? {
        guard case .bytes(let bytes) = FileBytes.read("/proc/\(pid)/net/\(name)", limit: limit) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every process's descriptors whose link is one of `links`, found in one pass over `/proc/*/fd/*`.
    ///
    /// Processes are visited nearest pid to `near` first (a workload's peers are most often its children and
    /// siblings), and the pass stops at `budget` nanoseconds: a host with very many descriptors gives what was found
    /// so far and says it was cut short. Processes whose descriptors cannot be read (another user's, without the
    /// privilege) are counted, not named.
    public static func holders(of links: Set<String>, near: Int32, budget: UInt64) -> DescriptorHolders {
        var found = DescriptorHolders()
        guard !links.isEmpty else { return found }
        let started = monotonicNow()
        let wanted = links.map { (link: $0, bytes: Array($0.utf8)) }
        let pids = processIDs().sorted { ($0 - near).magnitude < ($1 - near).magnitude }
        var buffer = [UInt8](repeating: 0, count: 4096)
        for pid in pids {
            if monotonicNow() - started > budget {
                found.cutShort = true
                break
            }
            guard let descriptors = opendir("/proc/\(pid)/fd") else {
                if errno == EACCES || errno == EPERM { found.unreadable += 1 }
                continue
            }
            found.processes += 1
            let directory = dirfd(descriptors)
            while let entry = readdir(descriptors) {
                // readlinkat on the directory's own descriptor: no path to build per descriptor.
                let count = withUnsafePointer(to: &entry.pointee.d_name) { name in
                    name.withMemoryRebound(to: CChar.self, capacity: 256) { name in
                        buffer.withUnsafeMutableBytes { bytes in
                            bytes.baseAddress.map {
                                readlinkat(directory, name, $0.assumingMemoryBound(to: CChar.self), bytes.count)
                            } ?? -1
                        }
                    }
                }
                guard count > 0,
                    let match = wanted.first(where: {
                        $0.bytes.count == count && $0.bytes.elementsEqual(buffer[..<count])
                    }),
                    let descriptor = Int32(directoryName(entry))
                else { continue }
                found.holders[match.link, default: []].append(
                    DescriptorHolders.Holder(pid: pid, descriptor: descriptor))
            }
            closedir(descriptors)
        }
        found.nanoseconds = monotonicNow() - started
        return found
    }

    /// The pids `/proc` lists.
    static func processIDs() -> [Int32] {
        guard let proc = opendir("/proc") else { return [] }
        defer { closedir(proc) }
        var pids: [Int32] = []
        while let entry = readdir(proc) {
            if let pid = Int32(directoryName(entry)), pid > 0 { pids.append(pid) }
        }
        return pids
    }

    private static func directoryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// A link's target, at most 4 KiB of it.
    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.baseAddress.map { readlink(path, $0, bytes.count) } ?? -1
        }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Who holds which objects, from one scan of every process's descriptors.
public struct DescriptorHolders: Equatable, Sendable {
    public struct Holder: Equatable, Sendable {
        public var pid: Int32
        public var descriptor: Int32
    }

    /// By link (`pipe:[123]`, `socket:[456]`, a FIFO's path).
    public var holders: [String: [Holder]] = [:]
    /// Processes whose descriptors could be read.
    public var processes = 0
    /// Processes whose descriptors could not be read for want of permission.
    public var unreadable = 0
    /// The scan stopped at its time budget.
    public var cutShort = false
    /// How long the pass took; a caller adds what its search spent before it, so the note says the whole.
    public var nanoseconds: UInt64 = 0

    public init() {}

    /// What the scan could not see, in one line; nil when it saw everything.
    public var note: String? {
        var parts: [String] = []
        if cutShort { parts.append("search cut short after \(nanoseconds / 1_000_000) ms (\(processes) processes)") }
        if unreadable > 0 {
            parts.append(
                "permission to read the descriptors of \(unreadable) process\(unreadable == 1 ? "" : "es") was missing")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
