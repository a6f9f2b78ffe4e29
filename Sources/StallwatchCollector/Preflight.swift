// Checks a running process before `attach` or `stack` touches it, and turns every obstacle into the fix.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchImages

/// A running process as `/proc` describes it, and what may stop stallwatch from tracing it.
struct TargetProcess {
    let pid: Int32
    /// `/proc/PID/comm`.
    let name: String
    /// Effective user id.
    let uid: UInt32
    /// Start time in clock ticks since boot (`stat` field 22): tells the process from a later one with the same pid.
    let startTime: UInt64
    /// Why ptrace would be refused, with the fix; nil if it should be allowed.
    ///
    /// Through a listening agent, Yama's scope 1 is not an obstacle (the agent names stallwatch its ptracer), and
    /// the others only move the capture in-process; from outside (`stack`, external mode) any of them is fatal.
    let ptraceObstacle: PtraceObstacle?
    /// Things that make stacks less trustworthy, such as a program file replaced since the process started.
    let warnings: [String]

    /// Whether the process is still the one inspected: alive, not a zombie, same start time.
    func isAlive() -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM, let fields = ThreadInspector.statFields(pid: pid, tid: pid),
            let state = fields.first?.first, state != "Z", state != "X"
        else { return false }
        return Preflight.startTime(fields) == startTime
    }
}

/// The checks run before attaching: the process exists, who may trace it, Yama, containers, replaced binaries.
enum Preflight {
    /// `PF_KTHREAD` in `stat`'s flags (field 9).
    static let kernelThreadFlag: UInt64 = 0x0020_0000

    /// Inspects `pid`; throws, with exit status 66, when there is nothing to attach to.
    static func inspect(pid: Int32) throws(StallwatchError) -> TargetProcess {
        guard pid != getpid() else {
            throw StallwatchError(message: "pid \(pid) is this stallwatch process itself", exitCode: ExitCode.usage)
        }
        guard let status = ProcStatus(pid: pid), let fields = ThreadInspector.statFields(pid: pid, tid: pid),
            let state = fields.first?.first
        else {
            throw noSuchProcess(
                "no process with pid \(pid) (it may have exited); find the pid with 'pgrep NAME' or 'ps -e'")
        }
        if let group = status.integer("Tgid"), group != Int(pid) {
            throw noSuchProcess("\(pid) is a thread of process \(group), not a process: use pid \(group)")
        }
        let name = ThreadInspector.processName(pid: pid)
        if state == "Z" || state == "X" {
            let parent = fields.count > 1 ? " (pid \(fields[1]))" : ""
            throw noSuchProcess(
                "pid \(pid) (\(name)) has exited: it is a zombie waiting for its parent\(parent) to collect its status")
        }
        if fields.count > 6, let flags = UInt64(fields[6]), flags & kernelThreadFlag != 0 {
            throw noSuchProcess("pid \(pid) (\(name)) is a kernel thread, which has no user-space stack")
        }
        let uids = status.ids("Uid")
        return TargetProcess(
            pid: pid, name: name, uid: uids.count > 1 ? uids[1] : 0, startTime: startTime(fields),
            ptraceObstacle: PtraceDiagnosis.obstacle(pid: pid, name: name, status: status),
            warnings: replacedFiles(pid: pid))
    }

    static func noSuchProcess(_ message: String) -> StallwatchError {
        StallwatchError(message: message, exitCode: ExitCode.noSuchProcess)
    }

    static func startTime(_ fields: [Substring]) -> UInt64 {
        fields.count > 19 ? UInt64(fields[19]) ?? 0 : 0
    }

    /// Whether `pid` descends from this process (Yama scope 1 lets ancestors trace).
    static func isDescendant(_ pid: Int32) -> Bool {
        var current = pid
        let me = getpid()
        for _ in 0..<64 {
            guard let fields = ThreadInspector.statFields(pid: current, tid: current), fields.count > 1,
                let parent = Int32(fields[1]), parent > 0
            else { return false }
            if parent == me { return true }
            current = parent
        }
        return false
    }

    static func userName(_ uid: UInt32) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "#\(uid)" }
        return String(cString: name)
    }

    // MARK: Replaced files

    /// The program and libraries that were replaced or deleted on disk after the process mapped them: symbols would
    /// be read from whatever file now has their name.
    static func replacedFiles(pid: Int32) -> [String] {
        let deleted = " (deleted)"
        var warnings: [String] = []
        // The same check the symbolicator makes to read such a program from the copy it runs.
        let program = ProcessImages.replacedExecutable(of: pid).map { String($0.mapped.dropLast(deleted.count)) }
        if let path = program {
            warnings.append(
                "the program file \(path) was replaced or deleted after pid \(pid) started: its frames are named from"
                    + " the copy it runs (/proc/\(pid)/exe), not the file now at that path")
        }
        var libraries: [String] = []
        for line in ProcMapsLines.ending(with: deleted, in: FileBytes.read("/proc/\(pid)/maps") ?? [])
        where line.contains(" r-xp ") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...].dropLast(deleted.count))
            if path != program, !libraries.contains(path) {
                libraries.append(path)
            }
        }
        if !libraries.isEmpty {
            let listed = libraries.prefix(3).joined(separator: ", ") + (libraries.count > 3 ? ", ..." : "")
            warnings.append(
                "libraries replaced on disk since pid \(pid) loaded them (an upgrade?): \(listed); names in them may"
                    + " be wrong until the process restarts")
        }
        return warnings
    }
}

/// `/proc/PID/status`: `Key:\tvalue` lines.
struct ProcStatus {
    let fields: [String: String]

    init?(pid: Int32) {
        guard let text = FileBytes.text("/proc/\(pid)/status"), !text.isEmpty else { return nil }
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            // Values are tab- or space-padded: trimmed by hand (Foundation's trimming costs more than the read).
            var value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
            fields[String(line[..<colon])] = String(value)
        }
        self.fields = fields
    }

    func integer(_ key: String) -> Int? {
        fields[key].flatMap { Int($0) }
    }

    /// `Uid:` and `Gid:`: real, effective, saved, filesystem.
    func ids(_ key: String) -> [UInt32] {
        (fields[key] ?? "").split(whereSeparator: \.isWhitespace).compactMap { UInt32($0) }
    }

    /// A capability set such as `CapEff`, as a bit mask.
    func capabilities(_ key: String) -> UInt64? {
        fields[key].flatMap { UInt64($0, radix: 16) }
    }

    /// The pid in the process's own (innermost) pid namespace: the last `NSpid` entry.
    var namespacePid: Int32? {
        fields["NSpid"].flatMap { $0.split(whereSeparator: \.isWhitespace).last }.flatMap { Int32($0) }
    }
}
