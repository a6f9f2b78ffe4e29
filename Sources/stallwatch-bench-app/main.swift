// The capture bench's library-mode app (Scripts/bench capture): it embeds StallMonitor as an app would, stalls its
// main run loop in `usleep(500 ms)` a few times, and prints one JSON line: its own sleep lengths, how long each
// sample stopped the thread, the capture method and the helper's resident memory.
//
// USAGE: stallwatch-bench-app (--helper PATH | --signal) [--sleeps N]
//
// Its own executable, not a `stallwatch-bench` workload: the agent linked into the bench would be a second agent in
// the workloads `stallwatch run` preloads the library into.
import Foundation
import Glibc
import StallwatchAgent

let arguments = CommandLine.arguments
let helperPath = arguments.firstIndex(of: "--helper").map { arguments[$0 + 1] }
let sleeps = arguments.firstIndex(of: "--sleeps").flatMap { Int(arguments[$0 + 1]) } ?? 5

final class Findings: @unchecked Sendable {
    let lock = NSLock()
    var sleptNanoseconds: [UInt64] = []
    var stoppedNanoseconds: [UInt64] = []
    var methods: Set<String> = []
    var helperResidentKiB: Int?
}
let findings = Findings()

let monitor = try StallMonitor.start(
    .init(threshold: .milliseconds(50), count: 2, helperPath: helperPath, usesHelper: helperPath != nil)
) { report in
    findings.lock.withLock {
        findings.methods.insert(report.captureMethod.rawValue)
        findings.stoppedNanoseconds += report.samples.compactMap(\.stoppedNanoseconds)
    }
}

/// The resident set of this process's one child, the capture helper, from `/proc`.
func helperResidentKiB() -> Int? {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for name in names where Int32(name) != nil {
        guard let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            stat[stat.index(close, offsetBy: 2)...].split(separator: " ").dropFirst().first == "\(getpid())",
            let status = try? String(contentsOfFile: "/proc/\(name)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { continue }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
    return nil
}

@inline(never) func sleepHalfASecond() -> UInt64 {
    let before = DispatchTime.now().uptimeNanoseconds
    usleep(500_000)
    return DispatchTime.now().uptimeNanoseconds - before
}

Timer.scheduledTimer(withTimeInterval: 0.9, repeats: true) { timer in
    let slept = sleepHalfASecond()
    let done = findings.lock.withLock {
        findings.sleptNanoseconds.append(slept)
        return findings.sleptNanoseconds.count == sleeps
    }
    guard done else { return }
    timer.invalidate()
    let resident = helperResidentKiB()
    monitor.stop()
    findings.lock.withLock {
        let record: [String: Any] = [
            "sleptNanoseconds": findings.sleptNanoseconds, "stoppedNanoseconds": findings.stoppedNanoseconds,
            "methods": findings.methods.sorted(), "helperResidentKiB": resident ?? 0,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: record)) ?? Data()
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
    exit(0)
}
RunLoop.main.run()
