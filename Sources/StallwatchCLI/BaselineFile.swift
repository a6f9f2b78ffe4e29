// Reads the fingerprints of known stalls from an earlier JSON-lines report (`--baseline FILE`).
import FoundationEssentials
import Glibc
import StallwatchAggregate
import StallwatchCore
import StallwatchSystem

/// The stall fingerprints an earlier `--format json` report recorded: stalls CI already knows about.
public enum BaselineFile {
    enum Failure: Error, Equatable {
        case unreadable(path: String, reason: String)
        case noRecords(path: String)
        case tooLarge(path: String)

        var message: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read --baseline file '\(path)': \(reason)"
            case .tooLarge(let path):
                "--baseline file '\(path)' is larger than \(BaselineFile.largestFile >> 20) MiB; give the report of one"
                    + " run ('stallwatch run --format json --output FILE -- ...')"
            case .noRecords(let path):
                "--baseline file '\(path)' holds no stallwatch JSON records; make it with"
                    + " 'stallwatch run --format json --output FILE -- ...'"
            }
        }
    }

    /// The fingerprints of every `stall` record in the file.
    ///
    /// A file with stallwatch records but no stalls is a valid (empty) baseline; a file with no stallwatch
    /// record at all is almost certainly the wrong file, and is refused.
    static func fingerprints(at path: String) throws(Failure) -> Set<String> {
        let data: [UInt8]
        switch FileBytes.read(path, limit: largestFile) {
        case .bytes(let bytes): data = bytes
        case .tooLarge: throw .tooLarge(path: path)
        case .unreadable(let code): throw .unreadable(path: path, reason: SystemError.describe(code))
        }
        guard let fingerprints = fingerprints(inReport: data) else { throw .noRecords(path: path) }
        return fingerprints
    }

    /// The fingerprints of every `stall` record in a JSON-lines report; nil when it holds no stallwatch record.
    public static func fingerprints(inReport data: [UInt8]) -> Set<String>? {
        var fingerprints: Set<String> = []
        var records = 0
        let decoder = JSONDecoder()
        let text =
            data.starts(with: NDJSONInput.byteOrderMark) ? data.dropFirst(NDJSONInput.byteOrderMark.count) : data[...]
        for line in text.split(separator: UInt8(ascii: "\n")) where line.first == UInt8(ascii: "{") {
            // No stall record is this long: a line that is, is not one.
            guard line.count <= longestLine else { continue }
            guard let record = try? decoder.decode(Record.self, from: Data(line)), let event = record.event
            else { continue }
            records += 1
            if event == "stall", let fingerprint = record.fingerprint {
                fingerprints.insert(fingerprint)
            }
        }
        return records > 0 ? fingerprints : nil
    }

    /// The largest baseline read: far more than a run's report, far less than memory.
    static let largestFile = 64 << 20
    /// The longest line decoded as a record: the limit `stallwatch report` reads records to.
    static let longestLine = NDJSONInput.longestLine

    /// The two keys a baseline needs from a record; the rest of it is not read.
    private struct Record: Decodable {
        let event: String?
        let fingerprint: String?
    }
}
