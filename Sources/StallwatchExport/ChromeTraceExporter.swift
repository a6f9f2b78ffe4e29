// Chrome's trace event format (JSON object form), for Perfetto's UI and chrome://tracing: stalls as complete events.
import StallwatchAggregate

/// A trace: one process track per watched process of each run and one thread track per stalled thread, both
/// numbered from 1 and named with metadata (`M`) events; each stall is a complete (`X`) event, each sample an
/// instant (`i`, thread-scoped) event with its stack, each frame-drop period a complete event of its own.
///
/// Times are microseconds from the earliest stall or frame drop of all inputs, on the wall clock.
public struct ChromeTraceExporter: StallExporter {
    public init() {}

    public func export(_ collection: StallCollection) -> [UInt8] {
        var json = JSONWriter()
        let origin = Self.origin(of: collection)
        func micros(_ milliseconds: Double) -> Double { ((milliseconds - origin) * 1000).rounded() }
        var processes: [ProcessKey: Int] = [:]
        var threads: [ThreadKey: Int] = [:]
        var first = true
        func event(_ body: (inout JSONWriter) -> Void) {
            json.comma(!first)
            first = false
            json.raw("{")
            body(&json)
            json.raw("}")
        }
        func metadata(_ name: String, pid: Int, tid: Int?, value: String) {
            event { json in
                json.key("ph", first: true)
                json.string("M")
                json.key("name")
                json.string(name)
                json.key("pid")
                json.number(pid)
                if let tid {
                    json.key("tid")
                    json.number(tid)
                }
                json.key("args")
                json.raw("{")
                json.key("name", first: true)
                json.string(value)
                json.raw("}")
            }
        }
        func process(run: Int32, pid: Int, name: String) -> Int {
            let key = ProcessKey(run: run, pid: pid)
            if let known = processes[key] { return known }
            let number = processes.count + 1
            processes[key] = number
            let info = collection.runs[Int(run)]
            metadata("process_name", pid: number, tid: nil, value: "\(name) (pid \(pid), \(info.host), \(info.source))")
            return number
        }
        func thread(process number: Int, run: Int32, pid: Int, tid: Int) -> Int {
            let key = ThreadKey(run: run, pid: pid, tid: tid)
            if let known = threads[key] { return known }
            let threadNumber = threads.count + 1
            threads[key] = threadNumber
            let label = tid == pid ? "main thread (tid \(tid))" : "thread \(tid)"
            metadata("thread_name", pid: number, tid: threadNumber, value: label)
            return threadNumber
        }
        json.raw("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[")
        for (index, stall) in collection.stalls.enumerated() {
            let pid = process(run: stall.run, pid: stall.pid, name: stall.process)
            let tid = thread(process: pid, run: stall.run, pid: stall.pid, tid: stall.tid)
            let culprit = stall.culprit.map { collection.frames[Int($0)] }
            event { json in
                json.key("ph", first: true)
                json.string("X")
                json.key("cat")
                json.string(stall.unfinished ? "stall,unfinished" : "stall")
                json.key("name")
                json.string((stall.unfinished ? "unfinished stall: " : "stall: ") + (culprit?.displayName ?? "?"))
                json.key("pid")
                json.number(pid)
                json.key("tid")
                json.number(tid)
                json.key("ts")
                json.number(micros(stall.startMs))
                json.key("dur")
                json.number((stall.knownDurationMs * 1000).rounded())
                json.key("args")
                json.raw("{")
                json.key("fingerprint", first: true)
                json.string(stall.fingerprint)
                json.key("stall")
                json.number(stall.id)
                json.key("callout")
                json.optionalString(stall.callout)
                json.key("culprit")
                json.optionalString(culprit?.displayName)
                json.key("location")
                json.optionalString(culprit?.location)
                json.key("unfinished")
                json.raw(stall.unfinished ? "true" : "false")
                json.raw("}")
            }
            for sample in stall.samples {
                event { json in
                    json.key("ph", first: true)
                    json.string("i")
                    json.key("s")
                    json.string("t")
                    json.key("cat")
                    json.string("sample")
                    json.key("name")
                    json.string("sample")
                    json.key("pid")
                    json.number(pid)
                    json.key("tid")
                    json.number(tid)
                    json.key("ts")
                    json.number(micros(stall.startMs + sample.capturedAfterMs))
                    json.key("args")
                    json.raw("{")
                    json.key("stall", first: true)
                    json.number(index + 1)
                    json.key("stack")
                    json.raw("[")
                    for (position, frame) in collection.stacks[Int(sample.stack)].enumerated() {
                        json.comma(position > 0)
                        json.string(collection.frames[Int(frame)].displayName)
                    }
                    json.raw("]}")
                }
            }
        }
        for (runIndex, run) in collection.runs.enumerated() {
            for drop in run.frameDrops {
                let pid = process(run: Int32(runIndex), pid: drop.pid, name: "pid \(drop.pid)")
                let tid = thread(process: pid, run: Int32(runIndex), pid: drop.pid, tid: drop.pid)
                event { json in
                    json.key("ph", first: true)
                    json.string("X")
                    json.key("cat")
                    json.string("frame-drops")
                    json.key("name")
                    json.string("dropped frames")
                    json.key("pid")
                    json.number(pid)
                    json.key("tid")
                    json.number(tid)
                    json.key("ts")
                    json.number(micros(drop.startMs))
                    json.key("dur")
                    json.number(((drop.endMs - drop.startMs) * 1000).rounded())
                }
            }
        }
        json.raw("]}\n")
        return json.bytes
    }

    static func origin(of collection: StallCollection) -> Double {
        let starts = collection.stalls.map(\.startMs) + collection.runs.flatMap { $0.frameDrops.map(\.startMs) }
        return starts.min() ?? 0
    }

    struct ProcessKey: Hashable {
        var run: Int32
        var pid: Int
    }

    struct ThreadKey: Hashable {
        var run: Int32
        var pid: Int
        var tid: Int
    }
}
