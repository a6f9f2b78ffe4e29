// `stallwatch report`: how long merging many stall records takes, and whether its memory stays bounded.
import Foundation
import StallwatchSystem

/// Writes NDJSON files of realistic stall records (ten samples of 24 frames each, as `--max-samples 10` gives,
/// their innermost frame taking turns among three functions as in a CPU-bound stall, over 50 fingerprints,
/// 20 processes and 4 hosts, every process with its own load addresses) and runs
/// `stallwatch report` on them, timing it and reading its peak resident set (`VmHWM` in `/proc/PID/status`, every
/// 2 ms: `wait4`'s `ru_maxrss` would count the driver's own memory, which posix_spawn shares until exec).
///
/// Memory is bounded if it grows with the number of stalls by a few hundred bytes each (their times and sample
/// lists), not with the size of the input: the input is read a chunk at a time and every frame is kept once.
struct ReportBenchmark {
    let products: BuildProducts

    static let sizes = [1_000, 10_000, 40_000]
    static let targetRecords = 10_000
    static let targetSeconds = 1.0

    func run() throws(BenchError) -> SectionReport {
        BenchOutput.progress("report: merging \(Self.sizes.map(String.init).joined(separator: ", ")) stall records")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-bench-report")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var table = ResultTable(
            "stallwatch report: stall records of 10 samples × 24 frames, 50 fingerprints, 20 processes, 4 hosts"
                + " (median of 3 runs; peak RSS: the largest VmHWM read every 2 ms)",
            header: ["records", "input", "format", "time", "peak RSS"])
        var report = SectionReport()
        var textPeaks: [(records: Int, kibibytes: Int, inputBytes: Int)] = []
        for size in Self.sizes {
            let path = directory.appendingPathComponent("stalls-\(size).ndjson").path
            let inputBytes = try Self.writeRecords(count: size, to: path)
            let formats = size == Self.targetRecords ? ["text", "html", "pprof", "speedscope"] : ["text"]
            for format in formats {
                var runs: [(seconds: Double, kibibytes: Int)] = []
                for _ in 0..<3 {
                    runs.append(
                        try measure([products.stallwatch, "report", "--format", format, "--output", "/dev/null", path]))
                }
                let seconds = runs.map(\.seconds).sorted()[1]
                let peak = runs.map(\.kibibytes).max() ?? 0
                table.add([
                    "\(size)", Format.mebibytes(inputBytes / 1024), format,
                    Format.fixed(seconds * 1000, 0) + " ms",
                    Format.mebibytes(peak),
                ])
                if format == "text" { textPeaks.append((size, peak, inputBytes)) }
                if size == Self.targetRecords, format == "text" {
                    report.targets.append(
                        TargetCheck(
                            "report merges \(size) stall records", measured: Format.fixed(seconds, 3) + " s",
                            target: "< \(Format.fixed(Self.targetSeconds, 1)) s", met: seconds < Self.targetSeconds,
                            limit: "parsing the records' JSON"))
                }
            }
        }
        report.tables.append(table)
        if let first = textPeaks.first, let last = textPeaks.last, last.records > first.records {
            let perStall = (last.kibibytes - first.kibibytes) * 1024 / (last.records - first.records)
            report.lines.append(
                "report memory: \(perStall) bytes more per stall record from \(first.records) to \(last.records) records"
                    + " (the input by \((last.inputBytes - first.inputBytes) / (last.records - first.records)) bytes)")
        }
        return report
    }

    /// Runs a command with stdout to /dev/null; its wall time and peak resident set.
    func measure(_ command: [String]) throws(BenchError) -> (seconds: Double, kibibytes: Int) {
        var spawn = Spawn(
            executable: command[0], arguments: command,
            environment: Spawn.environmentStrings(ProcessInfo.processInfo.environment))
        spawn.fileActions = [.open("/dev/null", flags: O_WRONLY, to: 1)]
        let start = MonotonicClock.now()
        let pid: pid_t
        do {
            pid = try spawn.start()
        } catch {
            throw BenchError("cannot run \(command[0]): \(error)")
        }
        var status: Int32 = 0
        var peak = 0
        while true {
            peak = max(peak, Self.highWaterKiB(of: pid) ?? 0)
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno != EINTR) { break }
            usleep(2000)
        }
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        guard status == 0 else { throw BenchError("\(command.joined(separator: " ")) exited with status \(status)") }
        return (seconds, peak)
    }

    /// `VmHWM` (peak resident set) of a running process, in KiB.
    static func highWaterKiB(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// Writes `count` stall records to `path`, one per line, each different in id, time and (per process)
    /// addresses, a hundred at a time so the driver stays small; returns the file's size.
    static func writeRecords(count: Int, to path: String) throws(BenchError) -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else { throw BenchError("cannot write \(path)") }
        defer { try? file.close() }
        var size = 0
        for start in stride(from: 0, to: count, by: 100) {
            let batch = Data(records(start..<min(count, start + 100)).utf8)
            size += batch.count
            file.write(batch)
        }
        return size
    }

    static func records(_ indices: Range<Int>) -> String {
        var output = ""
        for index in indices {
            let pid = 1000 + index % 20
            let host = "host-\(index % 4)"
            let fingerprint = String(format: "%016x", 0x5eed_0000 + index % 50)
            let base = UInt64(0x5555_0000_0000) + UInt64(pid) << 24
            // A CPU-bound stall's samples differ in their innermost frame: three leaves take turns.
            func frames(leaf: Int) -> String {
                (0..<24).map { depth in
                    let variant = depth == 0 ? (index % 50 * 4 + leaf) * 0x100 : 0
                    let address = base + UInt64(0x1000 + depth * 0x40 + variant)
                    let symbol = depth == 0 ? "Culprit\(index % 50).work\(leaf)(_:)" : "Module.caller\(depth)(_:)"
                    return
                        #"{"address":"0x\#(String(address, radix: 16))","image":"/srv/app/bin/server","offset":"0x\#(String(address - base, radix: 16))","symbol":"\#(symbol)","file":"/srv/app/Sources/Server/File\#(depth).swift","line":\#(depth * 7 + 3),"column":9,"inlined":false}"#
                }.joined(separator: ",")
            }
            let samples = (0..<10).map { sample in
                #"{"capturedAfterMs":\#(240 + sample * 80).5,"stoppedMs":0.08,"threadState":{"state":"R","syscall":null,"waitChannel":null},"frames":[\#(frames(leaf: sample % 3))]}"#
            }.joined(separator: ",")
            let second = index % 86_400
            let startedAt = String(
                format: "2026-11-29T%02d:%02d:%02d.%03dZ", second / 3600, second / 60 % 60, second % 60, index % 1000)
            output +=
                #"{"event":"stall","schemaVersion":2,"host":"\#(host)","id":\#(index / 20 + 1),"pid":\#(pid),"tid":\#(pid),"process":"server","startedAt":"\#(startedAt)","startMonotonicMs":\#(index * 1000).25,"durationMs":1040.5,"unfinished":false,"thresholdMs":80,"count":3,"activity":"afterWaiting","callout":"timer","fingerprint":"\#(fingerprint)","detectedAfterMs":240.2,"capture":{"method":"ptrace","note":null},"culprit":null,"thread":{"verdict":"cpuBound","cpuPercent":99.1,"blockedOn":null},"confidence":{"level":"high","watcherLateMs":0.2,"note":null},"samples":[\#(samples)]}"#
            output += "\n"
        }
        return output
    }
}
