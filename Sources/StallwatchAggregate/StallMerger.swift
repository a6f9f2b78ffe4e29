// Builds a StallCollection from lines: which run each record belongs to, stalls cut short, and each input's issues.

import StallwatchCore

/// Reads stallwatch's NDJSON records, line by line and input by input, into one ``StallCollection``.
///
/// Pure: it is handed bytes, never opens anything. A line it cannot use becomes an issue of its input's
/// ``SourceReport`` and reading goes on with the next line.
public struct StallMerger {
    private var collection = StallCollection()
    private var interner = FrameInterner()
    private var source: SourceReport?
    private var runIndex: Int32?
    private var runsInSource = 0
    /// `stall-detected` records waiting for their `stall`, by (run, pid, id).
    private var pending: [PendingKey: StallCollection.Stall] = [:]
    private var pendingOrder: [PendingKey] = []

    private struct PendingKey: Hashable {
        var run: Int32
        var pid: Int
        var id: Int
    }

    public init() {}

    /// Starts a new input; the previous one, if any, is finished first.
    ///
    /// - Parameter continuing: the input goes on from the previous one (the next file of a `--rotate` set, oldest
    ///   first): its run and its stalls detected but not yet ended carry over, so a stall detected in one file and
    ///   ended in the next is one stall; each file still gets its own ``SourceReport``.
    public mutating func beginSource(named name: String, continuing: Bool = false) {
        if continuing, let previous = source {
            collection.sources.append(previous)
            source = SourceReport(name: name)
            return
        }
        finishSource()
        source = SourceReport(name: name)
        runIndex = nil
        runsInSource = 0
    }

    /// Records that an input could not be read (from the point it failed).
    public mutating func sourceFailed(_ reason: String) {
        source?.readError = reason
    }

    /// Reads one line (without its newline). `isLastWithoutNewline`: the input ended inside this line.
    public mutating func read(line whole: UnsafeBufferPointer<UInt8>, isLastWithoutNewline: Bool = false) {
        if source == nil { beginSource(named: "-") }
        source!.lines += 1
        let number = source!.lines
        let line =
            number == 1 && whole.starts(with: NDJSONInput.byteOrderMark)
            ? UnsafeBufferPointer(rebasing: whole[NDJSONInput.byteOrderMark.count...]) : whole
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        let fields: RecordReader.Fields
        do {
            fields = try RecordReader.readFields(line, interning: &interner)
        } catch {
            if Self.isJSON(line) {
                issue(number, .notARecord)
            } else {
                issue(
                    number, isLastWithoutNewline ? .truncated : .notJSON("\(error.message) at byte \(error.offset + 1)")
                )
            }
            return
        }
        guard let event = fields.event, let version = fields.schemaVersion else {
            issue(number, .notARecord)
            return
        }
        source!.records += 1
        if version < RecordSchema.oldestReadable {
            issue(number, .olderSchema(version))
            return
        }
        if version > RecordSchema.version { issue(number, .newerSchema(version)) }
        switch event {
        case "stall", "stall-detected":
            checkKeys(fields, known: RecordReader.stallKeys, line: number)
            stall(from: fields, detectedOnly: event == "stall-detected", line: number)
        case "summary":
            checkKeys(fields, known: RecordReader.summaryKeys, line: number)
            let run = currentRun(host: fields.host)
            collection.runs[Int(run)].runMs = fields.runMs
            collection.runs[Int(run)].timedOut = fields.timedOut
            runIndex = nil
        case "frame-drops":
            checkKeys(fields, known: RecordReader.frameDropKeys, line: number)
            if let pid = fields.pid, let start = fields.startedAt.flatMap(RFC3339.milliseconds),
                let end = fields.endedAt.flatMap(RFC3339.milliseconds)
            {
                let run = currentRun(host: fields.host)
                collection.runs[Int(run)].frameDrops.append(.init(pid: pid, startMs: start, endMs: end))
            }
        case "deadlock":
            checkKeys(fields, known: RecordReader.deadlockKeys, line: number)
            if var deadlock = try? RecordReader.readDeadlock(line) {
                deadlock.run = currentRun(host: fields.host)
                collection.deadlocks.append(deadlock)
            }
        default:
            if !RecordReader.otherEvents.contains(event) { issue(number, .unknownEvent(event)) }
        }
    }

    /// Counts a line that is not read (one too long to hold); returns its number.
    public mutating func skipLine() -> Int {
        if source == nil { beginSource(named: "-") }
        source!.lines += 1
        return source!.lines
    }

    /// Finishes the current input: stalls detected but never reported whole become unfinished stalls.
    public mutating func finishSource() {
        guard var finished = source else { return }
        for key in pendingOrder {
            if let stall = pending[key] {
                collection.stalls.append(stall)
                finished.stalls += 1
            }
        }
        pending = [:]
        pendingOrder = []
        collection.sources.append(finished)
        source = nil
    }

    /// Everything read so far, the current input finished.
    public mutating func finish() -> StallCollection {
        finishSource()
        collection.frames = interner.frames
        collection.stacks = interner.stacks
        return collection
    }

    /// Whether a line that is not a record is JSON all the same (an array, a number, another program's object).
    static func isJSON(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        var scanner = JSONScanner(line)
        do {
            try scanner.skipValue()
            return scanner.atEnd
        } catch {
            return false
        }
    }

    private mutating func issue(_ line: Int, _ kind: SourceReport.Issue.Kind) {
        source!.issues.append(.init(line: line, kind: kind))
    }

    private mutating func checkKeys(_ fields: RecordReader.Fields, known: Set<String>, line: Int) {
        let unknown = fields.keys.filter { !known.contains($0) }
        if !unknown.isEmpty { issue(line, .unknownKeys(unknown)) }
    }

    private mutating func currentRun(host: String?) -> Int32 {
        if let runIndex { return runIndex }
        runsInSource += 1
        let index = Int32(collection.runs.count)
        collection.runs.append(
            .init(source: source!.name, ordinal: runsInSource, host: host ?? "unknown", pids: []))
        runIndex = index
        return index
    }

    private mutating func stall(from fields: RecordReader.Fields, detectedOnly: Bool, line: Int) {
        guard let fingerprint = fields.fingerprint else { return issue(line, .missingKey("fingerprint")) }
        guard let start = fields.startedAt.flatMap(RFC3339.milliseconds) else {
            return issue(line, .missingKey("startedAt"))
        }
        guard let pid = fields.pid else { return issue(line, .missingKey("pid")) }
        let run = currentRun(host: fields.host)
        if !collection.runs[Int(run)].pids.contains(pid) { collection.runs[Int(run)].pids.append(pid) }
        var stall = StallCollection.Stall(
            run: run, host: fields.host ?? collection.runs[Int(run)].host, pid: pid, tid: fields.tid ?? pid,
            process: fields.process ?? "pid \(pid)", threadName: fields.threadName, id: fields.id ?? 0, startMs: start,
            durationMs: detectedOnly ? nil : fields.durationMs, lengthMs: detectedOnly ? nil : fields.lengthMs,
            unfinished: detectedOnly || fields.unfinished,
            thresholdMs: fields.thresholdMs, callout: fields.callout, fingerprint: fingerprint,
            culprit: fields.culprit, verdict: fields.verdict, samples: fields.samples, blocker: fields.blocker)
        stall.suppressed = fields.suppressed
        let key = PendingKey(run: run, pid: pid, id: stall.id)
        if detectedOnly {
            if pending.updateValue(stall, forKey: key) == nil { pendingOrder.append(key) }
        } else {
            pending[key] = nil
            collection.stalls.append(stall)
            source!.stalls += 1
        }
    }
}
