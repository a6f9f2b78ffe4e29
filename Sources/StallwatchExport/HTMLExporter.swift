// The HTML page: one self-contained file (inline CSS and script, no network) with the merged stalls as JSON.
import StallwatchAggregate
import StallwatchCore

/// A page with a timeline per run and thread, a flame graph for all stalls and one per fingerprint, and the
/// sortable table of fingerprints; see ``HTMLTemplate`` for the page itself.
///
/// The data sits in a `<script type="application/json">` element. ``JSONWriter`` writes every `<` in a string as
/// `\u003c`, so no symbol or path can close the element (`</script>`) or open a comment.
public struct HTMLExporter: StallExporter {
    public init() {}

    public func export(_ collection: StallCollection) -> [UInt8] {
        let data = Self.data(collection)
        let head = HTMLTemplate.page.components(separatedBy: HTMLTemplate.dataMarker)
        return Array(head[0].utf8) + data + Array(head[1].utf8)
    }

    /// The page's data: frames (named once), stacks root first, runs, stalls with weighted samples, groups.
    static func data(_ collection: StallCollection) -> [UInt8] {
        var json = JSONWriter()
        var frameIndex: [FrameKey: Int] = [:]
        var pageFrame = [Int](repeating: -1, count: collection.frames.count)
        var frames = JSONWriter()
        func index(_ frame: Int32) -> Int {
            if pageFrame[Int(frame)] >= 0 { return pageFrame[Int(frame)] }
            let value = collection.frames[Int(frame)]
            let key = FrameKey(name: value.displayName, location: value.location)
            if let known = frameIndex[key] {
                pageFrame[Int(frame)] = known
                return known
            }
            let number = frameIndex.count
            frameIndex[key] = number
            pageFrame[Int(frame)] = number
            frames.comma(number > 0)
            frames.raw("{")
            frames.key("n", first: true)
            frames.string(key.name)
            frames.key("l")
            frames.optionalString(key.location)
            frames.key("lib")
            frames.raw(value.isLibrary || !ImageClassifier.isApplicationFrame(value) ? "true" : "false")
            frames.raw("}")
            return number
        }
        json.raw("{")
        json.key("version", first: true)
        json.string(StallwatchVersion.string)
        json.key("sources")
        json.raw("[")
        for (number, source) in collection.sources.enumerated() {
            json.comma(number > 0)
            json.string(source.name)
        }
        json.raw("]")
        json.key("stacks")
        json.raw("[")
        for (number, stack) in collection.stacks.enumerated() {
            json.comma(number > 0)
            json.raw("[" + stack.reversed().map { String(index($0)) }.joined(separator: ",") + "]")
        }
        json.raw("]")
        json.key("runs")
        json.raw("[")
        for (number, run) in collection.runs.enumerated() {
            json.comma(number > 0)
            json.raw("{")
            json.key("source", first: true)
            json.string(run.source)
            json.key("ordinal")
            json.number(run.ordinal)
            json.key("host")
            json.string(run.host)
            json.key("drops")
            json.raw("[")
            for (position, drop) in run.frameDrops.enumerated() {
                json.comma(position > 0)
                json.raw("[\(drop.pid),")
                json.number(drop.startMs)
                json.raw(",")
                json.number(drop.endMs - drop.startMs)
                json.raw("]")
            }
            json.raw("]}")
        }
        json.raw("]")
        json.key("stalls")
        json.raw("[")
        for (number, stall) in collection.stalls.enumerated() {
            json.comma(number > 0)
            writeStall(stall, to: &json, frame: index)
        }
        json.raw("]")
        json.key("deadlocks")
        json.raw("[")
        for (number, deadlock) in collection.deadlocks.enumerated() {
            json.comma(number > 0)
            json.string("\(deadlock.process) (pid \(deadlock.pid)): \(deadlock.summary)")
        }
        json.raw("]")
        json.key("groups")
        json.raw("[")
        for (number, group) in FingerprintGroup.groups(of: collection).enumerated() {
            json.comma(number > 0)
            writeGroup(group, to: &json, frame: index)
        }
        json.raw("]")
        json.key("frames")
        json.raw("[")
        json.bytes += frames.bytes
        json.raw("]}")
        return json.bytes
    }

    static func writeStall(_ stall: StallCollection.Stall, to json: inout JSONWriter, frame index: (Int32) -> Int) {
        json.raw("{")
        json.key("run", first: true)
        json.number(Int(stall.run))
        json.key("host")
        json.string(stall.host)
        json.key("pid")
        json.number(stall.pid)
        json.key("tid")
        json.number(stall.tid)
        json.key("process")
        json.string(stall.process)
        json.key("id")
        json.number(stall.id)
        json.key("start")
        json.number(stall.startMs)
        json.key("dur")
        json.number(stall.knownDurationMs)
        json.key("unfinished")
        json.raw(stall.unfinished ? "true" : "false")
        json.key("fp")
        json.string(stall.fingerprint)
        json.key("culprit")
        if let culprit = stall.culprit { json.number(index(culprit)) } else { json.raw("null") }
        json.key("callout")
        json.optionalString(stall.callout)
        json.key("verdict")
        json.optionalString(stall.verdict)
        json.key("blocker")
        writeBlocker(stall.blocker, to: &json)
        json.key("samples")
        json.raw("[")
        for (position, (sample, weight)) in zip(stall.samples, stall.sampleWeightsMs).enumerated() {
            json.comma(position > 0)
            json.raw("[")
            json.number(sample.capturedAfterMs)
            json.raw(",\(sample.stack),")
            json.number(weight)
            json.raw(",")
            json.optionalString(sample.state)
            json.raw("]")
        }
        json.raw("]}")
    }

    /// `null`, or what the stall's thread waited for: its line (`s`), the thread the time went to (`h`) and that
    /// thread's stack (`hs`, an index into `stacks`), whether the chain was a deadlock (`dl`).
    static func writeBlocker(_ blocker: StallCollection.Blocker?, to json: inout JSONWriter) {
        guard let blocker else {
            json.raw("null")
            return
        }
        json.raw("{")
        json.key("s", first: true)
        json.string(blocker.summary)
        json.key("h")
        json.optionalString(
            blocker.holderTid.map { "thread \(blocker.holderName ?? "?") (tid \($0))" })
        json.key("hs")
        if let stack = blocker.holderStack { json.number(Int(stack)) } else { json.raw("null") }
        json.key("dl")
        json.raw(blocker.deadlock ? "true" : "false")
        json.raw("}")
    }

    static func writeGroup(_ group: FingerprintGroup, to json: inout JSONWriter, frame index: (Int32) -> Int) {
        json.raw("{")
        json.key("fp", first: true)
        json.string(group.fingerprint)
        json.key("stalls")
        json.raw("[" + group.stalls.map(String.init).joined(separator: ",") + "]")
        json.key("unfinished")
        json.number(group.unfinished)
        json.key("total")
        json.number(group.totalMs)
        json.key("p50")
        json.optionalNumber(group.p50Ms)
        json.key("p95")
        json.optionalNumber(group.p95Ms)
        json.key("max")
        json.optionalNumber(group.maxMs)
        json.key("first")
        json.number(group.firstSeenMs)
        json.key("last")
        json.number(group.lastSeenMs)
        json.key("runs")
        json.number(group.runs)
        json.key("hosts")
        json.raw("[")
        for (position, host) in group.hosts.enumerated() {
            json.comma(position > 0)
            json.string(host)
        }
        json.raw("]")
        json.key("culprit")
        if let culprit = group.culprit { json.number(index(culprit)) } else { json.raw("null") }
        json.key("callout")
        json.optionalString(group.callout)
        json.key("process")
        json.string(group.process)
        json.raw("}")
    }

    struct FrameKey: Hashable {
        var name: String
        var location: String?
    }
}
