// speedscope's file format (https://www.speedscope.app/file-format-schema.json): one sampled profile per fingerprint.
import StallwatchAggregate
import StallwatchCore

/// A speedscope file: shared frames (name, file, line, column) and one `sampled` profile per fingerprint, most
/// stalled time first, with each sample's weight in milliseconds of stalled time.
public struct SpeedscopeExporter: StallExporter {
    public static let schema = "https://www.speedscope.app/file-format-schema.json"

    public init() {}

    public func export(_ collection: StallCollection) -> [UInt8] {
        var json = JSONWriter()
        // Frames that only differ by address (another process, another build) are one speedscope frame.
        var sharedIndex: [FrameKey: Int] = [:]
        var sharedFrames: [Frame] = []
        var indexOfFrame = [Int](repeating: -1, count: collection.frames.count)
        func shared(_ frame: Int32) -> Int {
            if indexOfFrame[Int(frame)] >= 0 { return indexOfFrame[Int(frame)] }
            let value = collection.frames[Int(frame)]
            let key = FrameKey(name: value.displayName, file: value.file, line: value.line)
            let index = sharedIndex[key] ?? sharedFrames.count
            if index == sharedFrames.count {
                sharedIndex[key] = index
                sharedFrames.append(value)
            }
            indexOfFrame[Int(frame)] = index
            return index
        }
        let groups = FingerprintGroup.groups(of: collection)
        var profiles = JSONWriter()
        profiles.raw("[")
        for (number, group) in groups.enumerated() {
            profiles.comma(number > 0)
            var samples: [[Int]] = []
            var weights: [Double] = []
            collection.forEachWeightedSample(of: group.stalls) { sample in
                samples.append(collection.rootFirst(sample.stack).map(shared))
                weights.append(sample.weightMs)
            }
            let culprit = group.culprit.map { collection.frames[Int($0)].displayName } ?? "no culprit"
            profiles.raw("{")
            profiles.key("type", first: true)
            profiles.string("sampled")
            profiles.key("name")
            profiles.string("\(culprit) [\(group.fingerprint)], \(group.stalls.count) stalls")
            profiles.key("unit")
            profiles.string("milliseconds")
            profiles.key("startValue")
            profiles.number(0)
            profiles.key("endValue")
            profiles.number(weights.reduce(0, +))
            profiles.key("samples")
            profiles.raw("[")
            for (index, stack) in samples.enumerated() {
                profiles.comma(index > 0)
                profiles.raw("[" + stack.map(String.init).joined(separator: ",") + "]")
            }
            profiles.raw("]")
            profiles.key("weights")
            profiles.raw("[")
            for (index, weight) in weights.enumerated() {
                profiles.comma(index > 0)
                profiles.number(weight)
            }
            profiles.raw("]}")
        }
        profiles.raw("]")
        json.raw("{")
        json.key("$schema", first: true)
        json.string(Self.schema)
        json.key("shared")
        json.raw("{\"frames\":[")
        for (index, frame) in sharedFrames.enumerated() {
            json.comma(index > 0)
            json.raw("{")
            json.key("name", first: true)
            json.string(frame.displayName)
            if let file = frame.file {
                json.key("file")
                json.string(file)
            }
            if let line = frame.line {
                json.key("line")
                json.number(line)
            }
            if let column = frame.column {
                json.key("col")
                json.number(column)
            }
            json.raw("}")
        }
        json.raw("]}")
        json.key("profiles")
        json.bytes += profiles.bytes
        json.key("name")
        json.string("stallwatch: \(collection.stalls.count) stalls in \(collection.runs.count) runs")
        json.key("activeProfileIndex")
        json.number(0)
        json.key("exporter")
        json.string("stallwatch \(StallwatchVersion.string)")
        json.raw("}\n")
        return json.bytes
    }

    struct FrameKey: Hashable {
        var name: String
        var file: String?
        var line: Int?
    }
}
