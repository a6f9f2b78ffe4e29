// Hand-made stallwatch NDJSON records for the tests of `stallwatch report`: small, with every key the reader uses.

/// Builds `stall` and `summary` lines the way `--format json` writes them.
public enum RecordFixtures {
    /// A frame object: an application frame in `app` unless `image` says otherwise.
    public static func frame(
        _ symbol: String, image: String = "/srv/app", address: UInt64 = 0x1000, file: String? = "main.swift",
        line: Int? = 10, inlined: Bool = false
    ) -> String {
        let fileText = file.map { "\"\($0)\"" } ?? "null"
        let lineText = line.map(String.init) ?? "null"
        return
            #"{"address":"0x\#(String(address, radix: 16))","image":"\#(image)","offset":"0x\#(String(address - 0x400, radix: 16))","symbol":"\#(symbol)","file":\#(fileText),"line":\#(lineText),"column":3,"inlined":\#(inlined)}"#
    }

    /// The stack main → run loop → `culprit`, innermost first, with a libc frame at the top of `_start`.
    public static func stack(culprit: String, address: UInt64 = 0x2000) -> [String] {
        [
            frame(culprit, address: address, line: 42),
            frame("CFRunLoopRunSpecific", image: "/usr/lib/swift/linux/libCoreFoundation.so", address: 0x7000),
            frame("main", address: 0x1100, line: 1),
            frame("__libc_start_main", image: "/usr/lib/x86_64-linux-gnu/libc.so.6", address: 0x9000, file: nil),
        ]
    }

    /// A `stall` record. `samples` are (capturedAfterMs, frames) pairs.
    public static func stall(
        id: Int = 1, pid: Int = 100, host: String? = "alpha", fingerprint: String = "aaaaaaaaaaaaaaaa",
        startedAt: String = "2026-11-29T20:33:10.287Z", durationMs: Double? = 600, culprit: String = "Work.crunch()",
        samples: [(Double, [String])]? = nil, event: String = "stall", schemaVersion: Int = 2, extra: String = ""
    ) -> String {
        let stack = stack(culprit: culprit)
        let sampleList = samples ?? [(240, stack), (320, stack), (400, stack)]
        let sampleText = sampleList.map { after, frames in
            #"{"capturedAfterMs":\#(after),"stoppedMs":0.1,"threadState":{"state":"R","syscall":null,"waitChannel":null},"frames":[\#(frames.joined(separator: ","))]}"#
        }.joined(separator: ",")
        let hostText = host.map { #""host":"\#($0)","# } ?? ""
        let duration = durationMs.map { String($0) } ?? "null"
        return
            #"{"event":"\#(event)","schemaVersion":\#(schemaVersion),\#(hostText)"id":\#(id),"pid":\#(pid),"tid":\#(pid),"process":"app","startedAt":"\#(startedAt)","startMonotonicMs":1000.5,"durationMs":\#(duration),"unfinished":\#(durationMs == nil),"thresholdMs":80,"count":3,"activity":"afterWaiting","callout":"timer","fingerprint":"\#(fingerprint)","detectedAfterMs":240,"capture":{"method":"ptrace","note":null},"culprit":\#(stack[0]),"thread":{"verdict":"cpuBound","cpuPercent":99.5,"blockedOn":null},"confidence":{"level":"high","watcherLateMs":0.1,"note":null},"samples":[\#(sampleText)]\#(extra)}"#
    }

    /// A `summary` record ending a run.
    public static func summary(host: String? = "alpha", stalls: Int = 1) -> String {
        let hostText = host.map { #""host":"\#($0)","# } ?? ""
        return
            #"{"event":"summary","schemaVersion":2,\#(hostText)"stalls":\#(stalls),"unfinished":0,"totalStallMs":600,"longestStallMs":600,"medianStallMs":600,"p95StallMs":600,"topCulprits":[],"runMs":2000,"stalledShare":0.3,"watchedPids":[100],"exitStatus":0,"warnings":[],"timedOut":false,"busyPeriods":null,"budget":null}"#
    }
}
