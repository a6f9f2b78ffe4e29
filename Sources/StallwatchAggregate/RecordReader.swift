// One NDJSON line to what it adds to a StallCollection: the keys of stallwatch's records (docs/json-schema.md),
// read with the pull parser; frames interned by their bytes so a repeated frame is decoded once.
import Glibc
import StallwatchCore

/// The parsing half of ``StallMerger``: what each record kind means and which keys it has.
enum RecordReader {

    static let stallKeys: Set<String> = [
        "event", "schemaVersion", "host", "id", "pid", "tid", "process", "startedAt", "startMonotonicMs",
        "durationMs", "lengthMs", "unfinished", "thresholdMs", "count", "activity", "callout", "fingerprint",
        "detectedAfterMs",
        "capture", "culprit", "thread", "confidence", "samples", "mode", "resolutionMs", "startedBeforeAttach",
        "runLoopMode", "strategy", "threadName", "blocker", "suppressed",
    ]
    static let summaryKeys: Set<String> = [
        "event", "schemaVersion", "host", "stalls", "unfinished", "totalStallMs", "longestStallMs", "medianStallMs",
        "p95StallMs", "topCulprits", "runMs", "stalledShare", "watchedPids", "exitStatus", "warnings", "timedOut",
        "busyPeriods", "budget", "fps", "mode", "pid", "ended", "signal", "strategy", "threads", "deadlocks",
        "suppressed",
    ]
    static let frameDropKeys: Set<String> = [
        "event", "schemaVersion", "host", "pid", "startedAt", "endedAt", "totalMs", "droppedMs",
    ]
    /// Records that add nothing to a report but are stallwatch's own.
    static let otherEvents: Set<String> = ["fps", "stack"]

    /// A record's top-level keys, read in any order.
    struct Fields {
        var event: String?
        var schemaVersion: Int?
        var host: String?
        var id: Int?
        var pid: Int?
        var tid: Int?
        var process: String?
        var threadName: String?
        var startedAt: String?
        var endedAt: String?
        var durationMs: Double?
        var lengthMs: Double?
        var unfinished = false
        /// A stall the rate limit shortened: no samples, its culprit from the one sample taken.
        var suppressed = false
        var thresholdMs: Double?
        var callout: String?
        var fingerprint: String?
        var culprit: Int32?
        var verdict: String?
        var samples: [StallCollection.StallSample] = []
        var blocker: StallCollection.Blocker?
        var runMs: Double?
        var timedOut = false
        var keys: [String] = []
    }

    static func readFields(
        _ line: UnsafeBufferPointer<UInt8>, interning interner: inout FrameInterner
    ) throws(JSONScanError) -> Fields {
        var scanner = JSONScanner(line)
        var fields = Fields()
        try scanner.readObject { (scanner, key) throws(JSONScanError) in
            fields.keys.append(key)
            switch key {
            case "event": fields.event = try scanner.readOptionalString()
            case "schemaVersion": fields.schemaVersion = try scanner.readOptionalInteger()
            case "host": fields.host = try scanner.readOptionalString()
            case "id": fields.id = try scanner.readOptionalInteger()
            case "pid": fields.pid = try scanner.readOptionalInteger()
            case "tid": fields.tid = try scanner.readOptionalInteger()
            case "process": fields.process = try scanner.readOptionalString()
            case "threadName": fields.threadName = try scanner.readOptionalString()
            case "startedAt": fields.startedAt = try scanner.readOptionalString()
            case "endedAt": fields.endedAt = try scanner.readOptionalString()
            case "durationMs": fields.durationMs = try scanner.readOptionalMilliseconds()
            case "lengthMs": fields.lengthMs = try scanner.readOptionalMilliseconds()
            case "unfinished":
                // A bool in stall records, a count in summaries.
                let next = try scanner.peek()
                if next == UInt8(ascii: "t") || next == UInt8(ascii: "f") {
                    fields.unfinished = try scanner.readBool()
                } else {
                    try scanner.skipValue()
                }
            case "suppressed":
                // A bool in stall records, a count in summaries.
                let next = try scanner.peek()
                if next == UInt8(ascii: "t") || next == UInt8(ascii: "f") {
                    fields.suppressed = try scanner.readBool()
                } else {
                    try scanner.skipValue()
                }
            case "thresholdMs": fields.thresholdMs = try scanner.readOptionalMilliseconds()
            case "callout": fields.callout = try scanner.readOptionalString()
            case "fingerprint": fields.fingerprint = try scanner.readOptionalString()
            case "culprit": fields.culprit = try scanner.readNull() ? nil : try interner.intern(&scanner)
            case "thread": fields.verdict = try readVerdict(&scanner)
            case "samples": fields.samples = try readSamples(&scanner, interning: &interner)
            case "blocker": fields.blocker = try readBlocker(&scanner, interning: &interner)
            case "runMs": fields.runMs = try scanner.readOptionalMilliseconds()
            case "timedOut": fields.timedOut = try scanner.readNull() ? false : try scanner.readBool()
            default: try scanner.skipValue()
            }
        }
        guard scanner.atEnd else { throw scanner.fail("more after the record's closing brace") }
        return fields
    }

    private static func readVerdict(_ scanner: inout JSONScanner) throws(JSONScanError) -> String? {
        guard try !scanner.readNull() else { return nil }
        var verdict: String?
        try scanner.readObject { (scanner, key) throws(JSONScanError) in
            if key == "verdict" { verdict = try scanner.readOptionalString() } else { try scanner.skipValue() }
        }
        return verdict
    }

    private static func readSamples(
        _ scanner: inout JSONScanner, interning interner: inout FrameInterner
    ) throws(JSONScanError) -> [StallCollection.StallSample] {
        guard try !scanner.readNull() else { return [] }
        var samples: [StallCollection.StallSample] = []
        try scanner.readArray { (scanner) throws(JSONScanError) in
            var capturedAfter = 0.0
            var state: String?
            var stack: Int32?
            try scanner.readObject { (scanner, key) throws(JSONScanError) in
                switch key {
                case "capturedAfterMs": capturedAfter = try scanner.readOptionalMilliseconds() ?? 0
                case "threadState":
                    guard try !scanner.readNull() else { return }
                    try scanner.readObject { (scanner, key) throws(JSONScanError) in
                        if key == "state" { state = try scanner.readOptionalString() } else { try scanner.skipValue() }
                    }
                case "frames":
                    guard try !scanner.readNull() else { return }
                    stack = try interner.internStack(&scanner)
                default: try scanner.skipValue()
                }
            }
            samples.append(
                .init(capturedAfterMs: capturedAfter, stack: stack ?? interner.intern(stack: []), state: state))
        }
        return samples
    }

    /// One frame object's keys.
    static func readFrame(_ scanner: inout JSONScanner) throws(JSONScanError) -> Frame {
        var frame = Frame(address: 0)
        func hex(_ text: String?) -> UInt64? {
            guard let text else { return nil }
            return UInt64(text.hasPrefix("0x") ? String(text.dropFirst(2)) : text, radix: 16)
        }
        try scanner.readObject { (scanner, key) throws(JSONScanError) in
            switch key {
            case "address": frame.address = hex(try scanner.readOptionalString()) ?? 0
            case "image": frame.image = try scanner.readOptionalString()
            case "offset": frame.offset = hex(try scanner.readOptionalString())
            case "symbol": frame.symbol = try scanner.readOptionalString()
            case "file": frame.file = try scanner.readOptionalString()
            case "line": frame.line = try scanner.readOptionalInteger()
            case "column": frame.column = try scanner.readOptionalInteger()
            case "inlined": frame.inlined = try scanner.readNull() ? false : try scanner.readBool()
            case "async": frame.async = try scanner.readNull() ? false : try scanner.readBool()
            default: try scanner.skipValue()
            }
        }
        return frame
    }
}

/// Frames and stacks stored once: a frame is looked up by a hash of its JSON bytes and decoded only when new.
struct FrameInterner {
    var frames: [Frame] = []
    var stacks: [[Int32]] = []
    private var frameBytes: [[UInt8]] = []
    private var framesByHash: [UInt64: [Int32]] = [:]
    private var stacksByFrames: [[Int32]: Int32] = [:]
    /// A sample's `frames` array by its bytes: a stack seen again (every sample of a blocked thread) costs one
    /// scan and one comparison, not one lookup per frame.
    private var stackBytes: [(bytes: [UInt8], stack: Int32)] = []
    private var stacksByHash: [UInt64: [Int32]] = [:]

    /// A hash of the bytes 32 at a time in four independent lanes (a frame is a couple of hundred bytes, a stack
    /// several thousand); equal hashes are confirmed with memcmp.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return 0 }
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (UInt64(bytes.count), 1, 2, 3)
        var offset = 0
        while offset + 32 <= bytes.count {
            lanes.0 = (lanes.0 ^ base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* multiplier
            lanes.1 = (lanes.1 ^ base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)) &* multiplier
            lanes.2 = (lanes.2 ^ base.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)) &* multiplier
            lanes.3 = (lanes.3 ^ base.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)) &* multiplier
            lanes.0 ^= lanes.0 >> 29
            lanes.1 ^= lanes.1 >> 29
            lanes.2 ^= lanes.2 >> 29
            lanes.3 ^= lanes.3 >> 29
            offset += 32
        }
        var hash = lanes.0 ^ (lanes.1 &* 3) ^ (lanes.2 &* 5) ^ (lanes.3 &* 7)
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* 0x100_0000_01b3
            offset += 1
        }
        return hash ^ (hash >> 31)
    }

    static func equal(_ stored: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard stored.count == bytes.count else { return false }
        guard let other = bytes.baseAddress else { return true }
        return stored.withUnsafeBufferPointer { memcmp($0.baseAddress!, other, bytes.count) == 0 }
    }

    /// The stack of the `frames` array that comes next.
    mutating func internStack(_ scanner: inout JSONScanner) throws(JSONScanError) -> Int32 {
        let range = try scanner.skipValue()
        let bytes = UnsafeBufferPointer(rebasing: scanner.bytes[range])
        let hash = Self.hash(bytes)
        if let candidates = stacksByHash[hash] {
            for index in candidates where Self.equal(stackBytes[Int(index)].bytes, bytes) {
                return stackBytes[Int(index)].stack
            }
        }
        var arrayScanner = JSONScanner(bytes)
        var frames: [Int32] = []
        do {
            try arrayScanner.readArray { (scanner) throws(JSONScanError) in frames.append(try intern(&scanner)) }
        } catch {
            throw JSONScanError(offset: range.lowerBound + error.offset, message: error.message)
        }
        let stack = intern(stack: frames)
        stacksByHash[hash, default: []].append(Int32(stackBytes.count))
        stackBytes.append((Array(bytes), stack))
        return stack
    }

    mutating func intern(_ scanner: inout JSONScanner) throws(JSONScanError) -> Int32 {
        let start = scanner.position
        let range = try scanner.skipValue()
        let bytes = UnsafeBufferPointer(rebasing: scanner.bytes[range])
        let hash = Self.hash(bytes)
        if let candidates = framesByHash[hash] {
            for index in candidates where Self.equal(frameBytes[Int(index)], bytes) { return index }
        }
        var frameScanner = JSONScanner(bytes)
        let frame: Frame
        do {
            frame = try RecordReader.readFrame(&frameScanner)
        } catch {
            throw JSONScanError(offset: start + error.offset, message: error.message)
        }
        let index = Int32(frames.count)
        frames.append(frame)
        frameBytes.append(Array(bytes))
        framesByHash[hash, default: []].append(index)
        return index
    }

    mutating func intern(stack: [Int32]) -> Int32 {
        if let index = stacksByFrames[stack] { return index }
        let index = Int32(stacks.count)
        stacks.append(stack)
        stacksByFrames[stack] = index
        return index
    }
}
