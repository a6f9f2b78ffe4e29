// `--rate-limit` and `--rotate` on a demo that stalls again and again in the same function, as a service would for
// weeks: full reports for the first stalls of each window, short records after, every stall counted; a rotated
// report file whose set `stallwatch report` reads whole.
import Foundation
import StallwatchTestSupport
import Testing

/// The demo's sleep scenario: `stalls` stalls of `durationMs` in `DiskCache.waitForSlowDisk`, one every `periodMs`,
/// watched at 50 ms × 2.
/// (Lengths off the 50 ms grid, so that no sample races a stall's end.)
func repeatedStalls(_ options: [String], stalls: Int, durationMs: Int = 320, periodMs: Int = 550) -> [String] {
    ["demo", "--scenario", "sleep", "--threshold", "50ms", "--count", "2"] + options + [
        "--", "--stalls", "\(stalls)", "--duration", "\(durationMs)ms", "--period", "\(periodMs)ms",
    ]
}

@Suite(.serialized) struct RateLimitTests {
    /// Every stall of the demo's sleep scenario names one fingerprint. (On a loaded machine the first stall's samples
    /// may come late, after its sleep, and name another: that fingerprint's first stall is full, as the rule says, and
    /// the others still get exactly two.)
    @Test func theFirstNStallsOfAFingerprintAreFullTheRestShortAndAllAreCounted() throws {
        let result = try runStallwatch(
            repeatedStalls(["--format", "json", "--rate-limit", "2/1h", "--max-stalls", "5"], stalls: 6))
        // Six stalls break --max-stalls 5 though most were shortened: budgets count every stall.
        #expect(result.status == 80, "\(result.stderr)")
        let truth = result.groundTruth
        let stalls = try result.stalls.sorted { $0.id < $1.id }
        try #require(truth.count == 6 && stalls.count == 6, "\(stalls.map(\.id)) \(result.stderr)")
        for (stall, measured) in zip(stalls, truth) {
            let duration = try #require(stall.durationMs.value)
            #expect(
                abs(duration - measured.durationMs) < 30, "stall \(stall.id): \(duration) ms, \(measured.durationMs)")
        }
        // Per fingerprint, the first two (a window of an hour holds the run) full, the rest short.
        _ = Self.followTheRule(stalls, perFingerprint: 2)
        let sleeps = stalls.filter { $0.culprit?.symbol?.contains("DiskCache.waitForSlowDisk") == true }
        try #require(sleeps.count >= 5 && Set(sleeps.map(\.fingerprint)).count == 1, "\(stalls.map(\.culprit?.symbol))")
        #expect(
            sleeps.map { $0.suppressed ?? false } == [false, false] + Array(repeating: true, count: sleeps.count - 2))
        // The full ones have their samples (one at detection, one per 50 ms of a 320 ms stall); the short ones none.
        #expect(sleeps.prefix(2).allSatisfy { $0.samples.count >= 3 }, "\(stalls.map(\.samples.count))")
        #expect(sleeps.dropFirst(2).allSatisfy { $0.samples.isEmpty && $0.capture.method == "ptrace" })
        let suppressed = stalls.filter { $0.suppressed == true }.map(\.id)
        let detected = try result.records.compactMap(\.detected)
        #expect(detected.filter { $0.suppressed == true }.map(\.id).sorted() == suppressed)
        #expect(detected.filter { $0.suppressed == true }.allSatisfy { $0.samples.isEmpty && $0.culprit != nil })
        let summary = try #require(try result.summary)
        #expect(summary.stalls == 6 && summary.suppressed == suppressed.count)
        #expect(summary.topCulprits.map(\.stalls).reduce(0, +) == 6, "suppressed stalls keep their culprits")
        #expect(summary.budget?.violations.contains { $0.contains("6 stalls, more than 5") } == true)
        // The short records are what keeps a long run's report small.
        let lines = result.stdout.split(separator: "\n").filter { $0.contains(#""event":"stall""#) }
        let (short, full) = (
            lines.filter { $0.contains(#""suppressed":true"#) }, lines.filter { !$0.contains("suppressed") }
        )
        #expect((short.map(\.count).max() ?? 0) * 4 < (full.map(\.count).min() ?? 0))
    }

    /// Each window of a fingerprint opens at its first stall: its first N stalls are full, the rest short, and the
    /// first stall after it opens the next. Replayed per fingerprint from the records' own detection times, so the
    /// machine's timing cannot make the test wrong, and required to cover at least two windows.
    @Test func everyWindowStartsWithItsNFullReports() throws {
        // 175 ms stalls: the samples at 100 and 150 ms both land in the sleep (one after it could name another
        // fingerprint, whose window is its own).
        let result = try runStallwatch(
            repeatedStalls(["--format", "json", "--rate-limit", "2/1s"], stalls: 9, durationMs: 175, periodMs: 300))
        #expect(result.status == 0, "\(result.stderr)")
        let stalls = try result.stalls.sorted { $0.id < $1.id }
        try #require(stalls.count == 9, "\(stalls.map(\.id))")
        var windows: [String: [(start: Double, suppressed: [Bool])]] = [:]
        for stall in stalls {
            let detected = stall.startMonotonicMs + stall.detectedAfterMs
            var fingerprintWindows = windows[stall.fingerprint] ?? []
            if let last = fingerprintWindows.last, detected - last.start < 1000 {
                fingerprintWindows[fingerprintWindows.count - 1].suppressed.append(stall.suppressed ?? false)
            } else {
                fingerprintWindows.append((detected, [stall.suppressed ?? false]))
            }
            let position = fingerprintWindows[fingerprintWindows.count - 1].suppressed.count
            #expect((stall.suppressed ?? false) == (position > 2), "stall \(stall.id), #\(position) of its window")
            windows[stall.fingerprint] = fingerprintWindows
        }
        let main = try #require(windows.values.max { $0.count < $1.count }).map(\.suppressed)
        #expect(main.count >= 2, "\(windows)")
        #expect(main.dropLast().allSatisfy { $0.prefix(2) == [false, false] && $0.count > 2 }, "\(main)")
        #expect(try result.summary?.suppressed == stalls.filter { $0.suppressed == true }.count)
    }

    @Test func textSaysItInOneLineAndInTheSummary() throws {
        let result = try runStallwatch(repeatedStalls(["--rate-limit", "1/1h", "--color", "never"], stalls: 3))
        #expect(result.status == 0, "\(result.stderr)")
        let short = result.stdout.split(separator: "\n").filter { $0.contains("over --rate-limit: one sample") }
        // Two, unless a loaded machine gave the first stall a fingerprint of its own (see above).
        #expect((1...2).contains(short.count), "\(result.stdout)")
        #expect(short.allSatisfy { $0.hasPrefix("stallwatch: stall #") && $0.contains("DiskCache.waitForSlowDisk") })
        #expect(result.stdout.contains("stallwatch: 3 stalls, "))
        #expect(result.stdout.contains(", \(short.count) shortened by --rate-limit"))
    }

    /// A stall over the limit seeks no lock holder: that search would stop the holder's thread too.
    @Test func aShortenedStallSeeksNoBlocker() throws {
        let result = try runStallwatch(
            ["demo", "--scenario", "mutex", "--format", "json", "--rate-limit", "1/1h", "--", "--stalls", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        let stalls = try result.stalls.sorted { $0.id < $1.id }
        try #require(stalls.count == 3, "\(result.stdout)")
        try #require(Self.followTheRule(stalls, perFingerprint: 1) >= 1)
        for stall in stalls where stall.suppressed == true {
            #expect(stall.blocker == .null && stall.thread.value?.blockedOn == "lock")
        }
        let full = try #require(stalls.first { $0.suppressed == nil })
        #expect(full.blocker.value?.holder.value?.threadName == "accounts-sync", "the full one names the holder")
    }

    /// `attach` limits as `run` does, through the process's agent and from outside.
    @Test(arguments: ["agent", "external"])
    func attachLimitsToo(mode: String) throws {
        let demo = try RunningDemo(
            ["--scenario", "sleep", "--stalls", "4", "--duration", "400ms", "--period", "700ms"],
            listening: mode == "agent")
        let result = try runStallwatch(
            ["attach", "--mode", mode, "--rate-limit", "1/1h", "--format", "json", String(demo.pid)])
        demo.waitForExit()
        #expect(result.status == 0, "\(result.stderr)")
        let stalls = try result.stalls.sorted { $0.id < $1.id }
        try #require(stalls.count == 4, "\(result.stdout)")
        let suppressed = Self.followTheRule(stalls, perFingerprint: 1)
        #expect(suppressed >= 2, "\(stalls.map(\.fingerprint))")
        #expect(stalls.filter { $0.suppressed == true }.allSatisfy { $0.samples.isEmpty })
        #expect(try result.summary?.suppressed == suppressed)
    }

    /// Checks that of each fingerprint (in a window longer than the run) the first `limit` stalls are full and the
    /// rest short; returns how many are short.
    static func followTheRule(
        _ stalls: [StallRecord], perFingerprint limit: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        var seen: [String: Int] = [:]
        for stall in stalls.sorted(by: { $0.id < $1.id }) {
            seen[stall.fingerprint, default: 0] += 1
            #expect(
                (stall.suppressed ?? false) == (seen[stall.fingerprint]! > limit), "stall \(stall.id)",
                sourceLocation: sourceLocation)
        }
        return stalls.filter { $0.suppressed == true }.count
    }

    @Test(arguments: [
        ["--rate-limit", "0/10m"], ["--rate-limit", "5/10"], ["--rate-limit", "-1/1h"], ["--rate-limit", "5/0s"],
        ["--output", "stalls.ndjson", "--rotate", "10M,0"], ["--output", "stalls.ndjson", "--rotate", "10"],
        ["--output", "stalls.ndjson", "--rotate", "-5M"], ["--rotate", "10M"],
    ])
    func badValuesAreOneLineAndExit64(options: [String]) throws {
        let result = try runStallwatch(["run"] + options + ["--", "/bin/sh", "-c", "echo ran"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").filter { $0.hasPrefix("Error") }.count == 1, "\(result.stderr)")
        #expect(!result.stdout.contains("ran"), "nothing started")
        let attach = try runStallwatch(["attach"] + options + ["1"])
        #expect(attach.status == 64 && attach.stderr.hasPrefix("Error: "), "\(attach.stderr)")
    }
}

@Suite(.serialized) struct RotationTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-rotation-\(UUID())").path

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The files in the directory, as a shell's `out.ndjson*` lists them.
    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted().map { directory + "/" + $0 }
    }

    @Test func aSmallSizeGivesSeveralWholeFilesAndReportReadsTheSet() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/out.ndjson"
        // A stall record of this scenario is 12-20 KiB and its stall-detected 6 KiB: 8 KiB rotates at nearly every
        // record, so most stalls begin in one file and end in the next.
        let result = try runStallwatch(
            repeatedStalls(["--format", "json", "--output", output, "--rotate", "8K,50"], stalls: 5, durationMs: 220))
        #expect(result.status == 0, "\(result.stderr)")
        let names = try files()
        #expect(names.count >= 5, "\(names)")
        var records: [JSONRecord] = []
        for name in names {
            let text = try String(contentsOfFile: name, encoding: .utf8)
            #expect(text.hasSuffix("}\n"), "\(name) ends with a complete record")
            records += try JSONLines.records(in: text)
        }
        // Five, unless a loaded machine kept the watcher from one of these short stalls: the files must hold what
        // the summary counted, whatever that was.
        let stalls = records.compactMap(\.stall).count
        #expect(stalls >= 4, "\(result.stderr)")
        #expect(records.compactMap(\.detected).count == stalls)
        let summary = try JSONLines.records(in: String(contentsOfFile: output, encoding: .utf8)).last?.summary
        #expect(summary?.stalls == stalls, "the summary is the newest file's last record")
        let report = try runStallwatch(["report"] + names)
        #expect(report.status == 0, "\(report.stderr)")
        let headline = report.stdout.split(separator: "\n").first ?? ""
        #expect(headline.hasPrefix("\(stalls) stalls ("), "\(headline)")
        #expect(headline.contains(" in 1 run on 1 host, "), "one run across the files: \(headline)")
        #expect(headline.hasSuffix(", from \(names.count) inputs"), "\(headline)")
        #expect(
            !report.stdout.contains("unfinished"), "each stall begun in one file ended in the next: \(report.stdout)")
    }

    @Test func onlyKeepRotatedFilesStay() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/out.ndjson"
        let result = try runStallwatch(
            repeatedStalls(["--format", "json", "--output", output, "--rotate", "1K,2"], stalls: 3, durationMs: 220))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try files() == [output, output + ".1", output + ".2"])
        // Every record has a file of its own at 1 KiB: the newest holds the summary, the one before it the last stall.
        #expect(try JSONLines.records(in: String(contentsOfFile: output, encoding: .utf8)).map(\.event) == ["summary"])
        #expect(try JSONLines.records(in: String(contentsOfFile: output + ".1", encoding: .utf8)).first?.stall != nil)
    }
}
