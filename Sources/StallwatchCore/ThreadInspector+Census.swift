// Reading, from /proc, how much CPU time every process and every thread of one process has used: the two readings a
// stall's CPU census compares.
import Glibc

extension ThreadInspector {
    /// Every process's CPU time (user plus system, `/proc/PID/stat`, in clock ticks of 10 ms) but `stalledPid`'s, and
    /// each of `stalledPid`'s threads' (`schedstat`, exact). Processes that cannot be read (gone, another user's under
    /// `hidepid`) are left out. A few milliseconds on a machine of a few hundred processes.
    public static func censusReading(stalledPid: Int32, now: UInt64) -> CPUCensus.Reading {
        let tick = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))
        var processes: [Int32: CPUCensus.Reading.Entry] = [:]
        for pid in allProcesses() where pid != stalledPid {
            guard let text = FileBytes.text("/proc/\(pid)/stat"), let entry = Self.censusEntry(stat: text, tick: tick)
            else { continue }
            processes[pid] = entry
        }
        var ownThreads: [Int32: CPUCensus.Reading.Entry] = [:]
        for tid in threads(pid: stalledPid) {
            guard let cpu = cpuTime(pid: stalledPid, tid: tid) else { continue }
            ownThreads[tid] = CPUCensus.Reading.Entry(name: name(pid: stalledPid, tid: tid) ?? "?", cpuNanoseconds: cpu)
        }
        return CPUCensus.Reading(processes: processes, threads: ownThreads, at: now)
    }

    /// A process's name and CPU time from its `stat` line; nil for one that does not parse.
    public static func censusEntry(stat text: String, tick: UInt64) -> CPUCensus.Reading.Entry? {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        let (sum, overflow) = user.addingReportingOverflow(system)
        let (nanoseconds, overflowTicks) = sum.multipliedReportingOverflow(by: 1_000_000_000 / tick)
        guard !overflow, !overflowTicks else { return nil }
        return CPUCensus.Reading.Entry(
            name: String(text[text.index(after: open)..<close]), cpuNanoseconds: nanoseconds)
    }

    /// The pids in `/proc`.
    static func allProcesses() -> [Int32] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let pid = Int32(name), pid > 0 { pids.append(pid) }
        }
        return pids
    }
}
