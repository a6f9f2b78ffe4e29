// The /proc reads that name what a blocked thread waits for: its call's arguments, a tid as the process numbers it,
// a child's command line and process group.
import FoundationEssentials
import Glibc

extension ThreadInspector {
    /// The system call the thread is in, with its arguments (`/proc/PID/task/TID/syscall`, which needs the
    /// permission ptrace needs); nil while it runs, outside a call, or unreadable.
    public static func syscallReading(pid: Int32, tid: Int32) -> SyscallReading? {
        FileBytes.text("/proc/\(pid)/task/\(tid)/syscall").flatMap { SyscallReading(line: $0) }
    }

    /// The process's thread that the process itself calls `tid` (a tid read from its memory is in its own pid
    /// namespace), or nil when it has no such live thread.
    public static func thread(of pid: Int32, namespaceTid tid: Int32) -> Int32? {
        guard tid > 0 else { return nil }
        guard let status = FileBytes.text("/proc/\(pid)/status") else { return nil }
        let namespaced =
            status.split(separator: "\n").first { $0.hasPrefix("NSpid:") }?
            .split(whereSeparator: \.isWhitespace).count ?? 2
        // `NSpid:\tPID`: the same numbering as stallwatch's; a second number: a pid namespace of its own.
        if namespaced <= 2 { return FileBytes.text("/proc/\(pid)/task/\(tid)/stat") != nil ? tid : nil }
        return innermostIDs(of: pid, threads: threads(pid: pid))[tid]
    }

    /// `threads` of `pid` by the tid each has in its innermost pid namespace (the last number of its `NSpid`).
    static func innermostIDs(of pid: Int32, threads: [Int32]) -> [Int32: Int32] {
        var ids: [Int32: Int32] = [:]
        for thread in threads {
            let line = FileBytes.text("/proc/\(pid)/task/\(thread)/status")?.split(separator: "\n")
                .first { $0.hasPrefix("NSpid:") }
            if let inner = line?.split(whereSeparator: \.isWhitespace).last.flatMap({ Int32($0) }) {
                ids[inner] = thread
            }
        }
        return ids
    }

    /// A process's pid as it knows itself (its innermost `NSpid`): its children's wait arguments use that numbering.
    public static func namespacePid(of pid: Int32) -> Int32? {
        let line = FileBytes.text("/proc/\(pid)/status")?.split(separator: "\n").first { $0.hasPrefix("NSpid:") }
        return line?.split(whereSeparator: \.isWhitespace).last.flatMap { Int32($0) }
    }

    /// `/proc/PID/cmdline` with its arguments joined by spaces, cut at `limit` characters; nil when unreadable or
    /// empty (a kernel thread, a zombie).
    public static func commandLine(pid: Int32, limit: Int = ChildProcess.maximumCommandLength) -> String? {
        // A prefix is enough: a command line may be megabytes long.
        let descriptor = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: limit * 4)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let bytes = buffer[..<count]
        var words = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if words.last?.isEmpty == true { words.removeLast() }
        let line = words.joined(separator: " ")
        return line.count > limit ? String(line.prefix(limit)) + "…" : line
    }

    /// The process group of `pid` (field 5 of `stat`), nil when unreadable.
    public static func processGroup(of pid: Int32) -> Int32? {
        guard let fields = statFields(pid: pid, tid: pid), fields.count > 2 else { return nil }
        return Int32(fields[2])
    }

    /// The pid a pidfd of `pid` refers to (`Pid:` in `/proc/PID/fdinfo/FD`); nil when it is none, or gone (-1).
    public static func pidOfDescriptor(_ descriptor: Int32, in pid: Int32) -> Int32? {
        let line = FileBytes.text("/proc/\(pid)/fdinfo/\(descriptor)")?.split(separator: "\n")
            .first { $0.hasPrefix("Pid:") }
        return line?.split(whereSeparator: \.isWhitespace).last.flatMap { Int32($0) }.flatMap { $0 > 0 ? $0 : nil }
    }
}
