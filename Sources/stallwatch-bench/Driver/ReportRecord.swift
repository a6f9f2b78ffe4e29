// The parts of stallwatch's JSON-lines records the benchmarks read (docs/json-schema.md).
import Foundation

/// A `stall` or `summary` record; keys the benchmarks do not use are ignored, as the schema asks of readers.
struct ReportRecord: Decodable {
    let event: String
    let startMonotonicMs: Double?
    let durationMs: Double?
    let detectedAfterMs: Double?
    let culprit: Culprit?
    let samples: [Sample]?
    let watchedPids: [Int32]?
    /// `--rate-limit` shortened the stall: one sample taken, none in the record.
    let suppressed: Bool?
    let blocker: Blocker?

    struct Culprit: Decodable {
        let symbol: String?
    }

    /// What the stalled thread waited for, and how long finding it took.
    struct Blocker: Decodable {
        let searchMs: Double?
        let holder: Holder?
        let children: [Child]?
        /// A descriptor wait's processes at the other end.
        let peers: [Child]?

        struct Holder: Decodable {
            let tid: Int?
        }

        struct Child: Decodable {
            let pid: Int?
        }
    }

    struct Sample: Decodable {
        let stoppedMs: Double?
        let capturedAfterMs: Double?
    }

    /// Every record in JSON-lines text; lines that are not records (a workload's own output) are skipped.
    static func parse(_ text: String) -> [ReportRecord] {
        let decoder = JSONDecoder()
        return text.split(separator: "\n").compactMap { try? decoder.decode(ReportRecord.self, from: Data($0.utf8)) }
    }
}
