// Collections made from hand-made records, and a minimal protobuf reader to look inside pprof output.
import StallwatchAggregate
import StallwatchTestSupport

/// Two fingerprints: `A.slow()` (two stalls of 600 ms on host alpha) and `B.wait()` (one of 300 ms on beta).
func sampleCollection() -> StallCollection {
    let first = [
        RecordFixtures.stall(id: 1, durationMs: 600, culprit: "A.slow()"),
        RecordFixtures.stall(id: 2, startedAt: "2026-11-29T20:33:12.000Z", durationMs: 600, culprit: "A.slow()"),
        RecordFixtures.summary(stalls: 2),
    ].joined(separator: "\n")
    let second = RecordFixtures.stall(
        id: 1, pid: 200, host: "beta", fingerprint: "bbbbbbbbbbbbbbbb", startedAt: "2026-11-29T20:33:11.000Z",
        durationMs: 300, culprit: "B.wait()")
    var merger = StallMerger()
    NDJSONInput.read(bytes: Array(first.utf8), named: "one.ndjson", into: &merger)
    NDJSONInput.read(bytes: Array(second.utf8), named: "two.ndjson", into: &merger)
    return merger.finish()
}

/// Protobuf fields of one message: (field number, varint value or bytes).
struct ProtoMessage {
    var varints: [(Int, UInt64)] = []
    var blobs: [(Int, [UInt8])] = []

    init(_ bytes: [UInt8]) throws {
        var index = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count else { throw ProtoError() }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        while index < bytes.count {
            let key = try varint()
            switch key & 7 {
            case 0: varints.append((Int(key >> 3), try varint()))
            case 2:
                let length = Int(try varint())
                guard index + length <= bytes.count else { throw ProtoError() }
                blobs.append((Int(key >> 3), Array(bytes[index..<index + length])))
                index += length
            default: throw ProtoError()
            }
        }
    }

    func varints(_ field: Int) -> [UInt64] { varints.filter { $0.0 == field }.map(\.1) }
    func blobs(_ field: Int) -> [[UInt8]] { blobs.filter { $0.0 == field }.map(\.1) }

    /// A packed repeated varint field.
    func packed(_ field: Int) throws -> [UInt64] {
        var values: [UInt64] = []
        for blob in blobs(field) {
            var index = 0
            while index < blob.count {
                var value: UInt64 = 0
                var shift: UInt64 = 0
                while true {
                    let byte = blob[index]
                    index += 1
                    value |= UInt64(byte & 0x7f) << shift
                    if byte < 0x80 { break }
                    shift += 7
                }
                values.append(value)
            }
        }
        return values
    }
}

struct ProtoError: Error {}

/// One stall record whose culprit is named `symbol`.
enum StallwatchTestSupportRecord {
    static func withCulprit(_ symbol: String) -> String {
        RecordFixtures.stall(culprit: symbol)
    }
}
