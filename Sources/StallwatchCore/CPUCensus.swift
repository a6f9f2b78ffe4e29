// Who had the CPUs while a stalled thread waited for one: the processes, and the stalled process's other threads, that
// ran most between two readings of the CPU time each had used.

/// What ran while a stall waited for a CPU: the largest users of CPU time over a window of the stall.
///
/// Pure: the readings (``Reading``) come from `/proc` (``ThreadInspector/censusReading(stalledPid:now:)``); this
/// compares two. Another process counts as a whole; the stalled process is split into its threads, since a hog
/// inside it (a busy worker beside its event loop) is as likely as one outside.
public struct CPUCensus: Equatable, Sendable {
    /// A process, or one thread of the stalled process, and the CPU time it used in the window.
    public struct Holder: Equatable, Sendable {
        public var pid: Int32
        /// A thread of the stalled process; nil for a whole other process.
        public var tid: Int32?
        public var name: String
        public var cpuNanoseconds: UInt64

        public init(pid: Int32, tid: Int32?, name: String, cpuNanoseconds: UInt64) {
            self.pid = pid
            self.tid = tid
            self.name = name
            self.cpuNanoseconds = cpuNanoseconds
        }
    }

    /// The CPU time each process (and each thread of the stalled process) had used at one moment.
    public struct Reading: Equatable, Sendable {
        public struct Entry: Equatable, Sendable {
            public var name: String
            public var cpuNanoseconds: UInt64

            public init(name: String, cpuNanoseconds: UInt64) {
                self.name = name
                self.cpuNanoseconds = cpuNanoseconds
            }
        }

        /// Every process but the stalled one, by pid.
        public var processes: [Int32: Entry]
        /// The stalled process's threads, by tid.
        public var threads: [Int32: Entry]
        /// When it was read (`CLOCK_MONOTONIC`).
        public var at: UInt64

        public init(processes: [Int32: Entry], threads: [Int32: Entry], at: UInt64) {
            self.processes = processes
            self.threads = threads
            self.at = at
        }
    }

    /// The window the census covers: from the stall's detection to its end (what `/proc` can give).
    public var windowNanoseconds: UInt64
    /// The largest users first, at most ``holdersKept``, none that used no CPU.
    public var holders: [Holder]

    public static let holdersKept = 5

    public init(windowNanoseconds: UInt64, holders: [Holder]) {
        self.windowNanoseconds = windowNanoseconds
        self.holders = holders
    }

    /// What ran between `before` and `after`, leaving out the stalled thread itself. A process or thread that began in
    /// the window counts all its CPU time; one whose count went down (its pid reused) counts none.
    public static func between(
        _ before: Reading, _ after: Reading, stalledPid: Int32, stalledTid: Int32
    ) -> CPUCensus? {
        guard after.at > before.at else { return nil }
        var holders: [Holder] = []
        for (pid, entry) in after.processes where pid != stalledPid {
            let used = used(entry, since: before.processes[pid])
            if used > 0 { holders.append(Holder(pid: pid, tid: nil, name: entry.name, cpuNanoseconds: used)) }
        }
        for (tid, entry) in after.threads where tid != stalledTid {
            let used = used(entry, since: before.threads[tid])
            if used > 0 { holders.append(Holder(pid: stalledPid, tid: tid, name: entry.name, cpuNanoseconds: used)) }
        }
        holders.sort { ($0.cpuNanoseconds, $1.pid, $1.tid ?? 0) > ($1.cpuNanoseconds, $0.pid, $0.tid ?? 0) }
        return CPUCensus(windowNanoseconds: after.at - before.at, holders: Array(holders.prefix(holdersKept)))
    }

    private static func used(_ now: Reading.Entry, since then: Reading.Entry?) -> UInt64 {
        guard let then else { return now.cpuNanoseconds }
        return now.cpuNanoseconds >= then.cpuNanoseconds ? now.cpuNanoseconds - then.cpuNanoseconds : 0
    }

    /// A holder's CPU time as a share of one CPU over the window, 0–100 per CPU (a multi-threaded process may pass
    /// 100).
    public func percentOfACPU(_ holder: Holder) -> Double {
        windowNanoseconds == 0 ? 0 : Double(holder.cpuNanoseconds) / Double(windowNanoseconds) * 100
    }

    /// "cpu-hog (tid 4312, this process) 49 %, yes (pid 4400) 47 %": for the text report.
    public var summary: String {
        holders.map { holder in
            let who = holder.tid.map { "tid \($0), this process" } ?? "pid \(holder.pid)"
            return "\(holder.name) (\(who)) \(Int(percentOfACPU(holder).rounded())) %"
        }.joined(separator: ", ")
    }
}
