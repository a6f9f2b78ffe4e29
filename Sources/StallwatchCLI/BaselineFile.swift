// Reads the fingerprints of known stalls from an earlier JSON-lines report (`--baseline FILE`).
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchSystem

/// The stall fingerprints an earlier `--format json` report recorded: stalls CI already knows about.
enum BaselineFile {
    enum Failure: Error, Equatable {
        case unreadable(path: String, reason: String)
        case noRecords(path: String)

        var message: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read --baseline file '\(path)': \(reason)"
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
        guard let data = FileBytes.read(path) else {
            throw .unreadable(path: path, reason: SystemError.describe(errno))
        }
        var fingerprints: Set<String> = []
        var records = 0
        let decoder = JSONDecoder()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("{") {
            guard let record = try? decoder.decode(Record.self, from: Data(line.utf8)), let event = record.event
            else { continue }
            records += 1
            if event == "stall", let fingerprint = record.fingerprint {
                fingerprints.insert(fingerprint)
            }
        }
        guard records > 0 else { throw .noRecords(path: path) }
        return fingerprints
    }

    /// The two keys a baseline needs from a record; the rest of it is not read.
    private struct Record: Decodable {
        let event: String?
        let fingerprint: String?
    }
}
