// pprof's profile.proto (github.com/google/pprof/proto/profile.proto), gzipped, as Go's runtime/pprof writes it.
import StallwatchAggregate
import StallwatchCore
import StallwatchReport

/// A pprof profile of stalled time: one sample per captured stack, valued `[1 sample, N nanoseconds]` where N is
/// the stalled time the stack stands for, labelled `fingerprint`, `stall`, `thread` and `callout`.
///
/// Each image is a mapping (its load base from address − offset); each run of inlined frames and the frame they
/// were inlined into is one location with several lines, innermost first; functions are named, with file and line.
/// Records carry no build IDs, so mappings have none.
public struct PprofExporter: StallExporter {
    public init() {}

    public func export(_ collection: StallCollection) -> [UInt8] {
        Gzip.compress(profile(collection))
    }

    /// The uncompressed protobuf message.
    func profile(_ collection: StallCollection) -> [UInt8] {
        var strings = StringTable()
        var message = ProtobufWriter()
        // sample_type (1): samples/count, stalled/nanoseconds; the second is the default (14).
        for (type, unit) in [("samples", "count"), ("stalled", "nanoseconds")] {
            let typeIndex = strings.index(type)
            let unitIndex = strings.index(unit)
            message.field(1) { value in
                value.field(1, Int64(typeIndex))
                value.field(2, Int64(unitIndex))
            }
        }
        var functions: [FunctionKey: UInt64] = [:]
        var functionMessages: [[UInt8]] = []
        var mappings: [MappingKey: Mapping] = [:]
        var locationOfFrame: [Int32: UInt64] = [:]
        var locationMessages: [[UInt8]] = []
        func function(_ frame: Frame) -> UInt64 {
            let key = FunctionKey(name: frame.displayName, file: frame.file)
            if let known = functions[key] { return known }
            let id = UInt64(functions.count + 1)
            functions[key] = id
            var value = ProtobufWriter()
            value.field(1, id)
            value.field(2, Int64(strings.index(key.name)))
            value.field(3, Int64(strings.index(frame.symbol ?? key.name)))
            if let file = frame.file { value.field(4, Int64(strings.index(file))) }
            functionMessages.append(value.bytes)
            return id
        }
        func mapping(_ frame: Frame) -> UInt64 {
            guard let image = frame.image, let offset = frame.offset, frame.address >= offset else { return 0 }
            let key = MappingKey(image: image, base: frame.address - offset)
            var entry = mappings[key] ?? Mapping(id: UInt64(mappings.count + 1), limit: frame.address + 1)
            entry.limit = max(entry.limit, frame.address + 1)
            mappings[key] = entry
            return entry.id
        }
        /// The location of one frame group: frames inlined into the last one, innermost first.
        func location(_ group: [Frame], cacheKey: Int32?) -> UInt64 {
            if let cacheKey, let known = locationOfFrame[cacheKey] { return known }
            let id = UInt64(locationMessages.count + 1)
            let outer = group[group.count - 1]
            var value = ProtobufWriter()
            value.field(1, id)
            value.field(2, mapping(outer))
            value.field(3, outer.address)
            for frame in group {
                value.field(4) { line in
                    line.field(1, function(frame))
                    line.field(2, Int64(frame.line ?? 0))
                    line.field(3, Int64(frame.column ?? 0))
                }
            }
            locationMessages.append(value.bytes)
            if let cacheKey { locationOfFrame[cacheKey] = id }
            return id
        }
        var noStackLocations: [String: UInt64] = [:]
        let labelKeys = ["fingerprint", "stall", "thread", "callout"].map { Int64(strings.index($0)) }
        var sampleMessages: [[UInt8]] = []
        collection.forEachWeightedSample { sample in
            let stall = collection.stalls[sample.stall]
            var locations: [UInt64] = []
            if let stackIndex = sample.stack {
                let stack = collection.stacks[Int(stackIndex)]
                var start = 0
                for index in stack.indices
                where !collection.frames[Int(stack[index])].inlined || index == stack.count - 1 {
                    let group = stack[start...index].map { collection.frames[Int($0)] }
                    // A frame on its own is one location wherever it appears; an inlined group is made anew.
                    locations.append(location(group, cacheKey: start == index ? stack[index] : nil))
                    start = index + 1
                }
            } else {
                let name = stall.missingStackName
                let missing = noStackLocations[name] ?? location([Frame(address: 0, symbol: name)], cacheKey: nil)
                noStackLocations[name] = missing
                locations = [missing]
            }
            let run = collection.runs[Int(stall.run)]
            let values: [(Int64, String)] = [
                (labelKeys[0], stall.fingerprint),
                (labelKeys[1], "\(stall.host)/\(run.source)#\(run.ordinal)/pid \(stall.pid)/stall \(stall.id)"),
                // By name, as pprof's -tagfocus=thread=NAME picks threads; a main thread's record names none.
                (labelKeys[2], stall.threadName ?? "\(stall.process) tid \(stall.tid)"),
                (labelKeys[3], stall.callout ?? "none"),
            ]
            var value = ProtobufWriter()
            value.packed(1, locations)
            value.packed(2, [1, UInt64(max(0, Self.nanoseconds(sample.weightMs)))])
            for (key, text) in values {
                let index = Int64(strings.index(text))
                value.field(3) { label in
                    label.field(1, key)
                    label.field(2, index)
                }
            }
            sampleMessages.append(value.bytes)
        }
        for sample in sampleMessages { message.field(2, bytes: sample) }
        // pprof names a profile after its first mapping: the program's own images go first.
        let ordered = mappings.sorted {
            (ImageClassifier.isSystemImage($0.key.image) ? 1 : 0, $0.value.id)
                < (ImageClassifier.isSystemImage($1.key.image) ? 1 : 0, $1.value.id)
        }
        for (key, entry) in ordered {
            let file = Int64(strings.index(key.image))
            message.field(3) { value in
                value.field(1, entry.id)
                value.field(2, key.base)
                value.field(3, entry.limit)
                value.field(5, file)
                value.field(7, true)
                value.field(8, true)
                value.field(9, true)
                value.field(10, true)
            }
        }
        for location in locationMessages { message.field(4, bytes: location) }
        for function in functionMessages { message.field(5, bytes: function) }
        let periodType = (Int64(strings.index("stalled")), Int64(strings.index("nanoseconds")))
        for text in strings.texts { message.field(6, string: text) }
        let starts = collection.stalls.map(\.startMs)
        if let first = starts.min() {
            let end = collection.stalls.map { $0.startMs + $0.knownDurationMs }.max() ?? first
            message.field(9, Self.nanoseconds(first))
            message.field(10, Self.nanoseconds(end - first))
        }
        message.field(11) { value in
            value.field(1, periodType.0)
            value.field(2, periodType.1)
        }
        message.field(14, periodType.0)
        return message.bytes
    }

    /// Milliseconds as nanoseconds, clamped to what an int64 holds (a record may claim the year 9999).
    static func nanoseconds(_ milliseconds: Double) -> Int64 {
        let value = (milliseconds * 1e6).rounded()
        guard value.isFinite else { return 0 }
        return value >= 9e18 ? 9_000_000_000_000_000_000 : value <= -9e18 ? -9_000_000_000_000_000_000 : Int64(value)
    }

    struct FunctionKey: Hashable {
        var name: String
        var file: String?
    }

    struct MappingKey: Hashable {
        var image: String
        var base: UInt64
    }

    struct Mapping {
        var id: UInt64
        var limit: UInt64
    }
}

/// profile.proto's string table: index 0 is the empty string.
///
/// Its strings are names from the watched programs (functions, files, threads), which `go tool pprof` prints to a
/// terminal as they are: each is stored with control characters as visible escapes (``TerminalText``).
struct StringTable {
    private(set) var texts: [String] = [""]
    private var indices: [String: Int] = ["": 0]

    mutating func index(_ text: String) -> Int {
        if let known = indices[text] { return known }
        indices[text] = texts.count
        texts.append(TerminalText.escaped(text))
        return texts.count - 1
    }
}
