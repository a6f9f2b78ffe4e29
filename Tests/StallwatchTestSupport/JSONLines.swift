// Decoding stallwatch's JSON lines (one object per line) into the record types, with errors that name the line.
import Foundation

/// One line of stallwatch's JSON output, by its `event`.
public enum JSONRecord: Decodable, Equatable, Sendable {
    case stall(StallRecord)
    case detected(DetectedRecord)
    case summary(SummaryRecord)
    case stack(StackRecord)
    case fps(FrameRateRecord)
    case frameDrops(FrameDropsRecord)
    case deadlock(DeadlockRecord)
    /// An `event` these types do not know; readers ignore them (the README says later versions may add some).
    case other(event: String)

    private enum Keys: String, CodingKey { case event }

    public init(from decoder: any Decoder) throws {
        let event = try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .event)
        switch event {
        case "stall": self = .stall(try StallRecord(from: decoder))
        case "stall-detected": self = .detected(try DetectedRecord(from: decoder))
        case "summary": self = .summary(try SummaryRecord(from: decoder))
        case "stack": self = .stack(try StackRecord(from: decoder))
        case "fps": self = .fps(try FrameRateRecord(from: decoder))
        case "frame-drops": self = .frameDrops(try FrameDropsRecord(from: decoder))
        case "deadlock": self = .deadlock(try DeadlockRecord(from: decoder))
        default: self = .other(event: event)
        }
    }

    /// The record's `event` key.
    public var event: String {
        switch self {
        case .stall(let record): record.event
        case .detected(let record): record.event
        case .summary(let record): record.event
        case .stack(let record): record.event
        case .fps(let record): record.event
        case .frameDrops(let record): record.event
        case .deadlock(let record): record.event
        case .other(let event): event
        }
    }

    public var stall: StallRecord? {
        if case .stall(let record) = self { return record }
        return nil
    }

    public var detected: DetectedRecord? {
        if case .detected(let record) = self { return record }
        return nil
    }

    public var summary: SummaryRecord? {
        if case .summary(let record) = self { return record }
        return nil
    }

    public var stack: StackRecord? {
        if case .stack(let record) = self { return record }
        return nil
    }

    public var fps: FrameRateRecord? {
        if case .fps(let record) = self { return record }
        return nil
    }

    public var deadlock: DeadlockRecord? {
        if case .deadlock(let record) = self { return record }
        return nil
    }

    public var frameDrops: FrameDropsRecord? {
        if case .frameDrops(let record) = self { return record }
        return nil
    }
}

public enum JSONLines {
    /// Every record in `text`: each line that starts with `{` (other lines, such as a workload's output, are
    /// skipped). Throws on the first record line that does not decode, naming the line and the key.
    public static func records(in text: String) throws -> [JSONRecord] {
        var records: [JSONRecord] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where line.hasPrefix("{") {
            do {
                records.append(try decode(JSONRecord.self, from: line))
            } catch let error as JSONLineError {
                throw JSONLineError(lineNumber: index + 1, line: error.line, underlying: error.underlying)
            }
        }
        return records
    }

    /// One JSON object (one line, with or without its newline) decoded as `type`.
    public static func decode<T: Decodable>(_ type: T.Type, from line: some StringProtocol) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(line.utf8))
        } catch {
            throw JSONLineError(lineNumber: nil, line: String(line), underlying: error)
        }
    }
}

/// A JSON line that did not decode: which line, which key, and why.
public struct JSONLineError: Error, CustomStringConvertible {
    /// From 1, when the line came from a longer text.
    public let lineNumber: Int?
    public let line: String
    public let underlying: any Error

    public var description: String {
        let place = lineNumber.map { "line \($0)" } ?? "the line"
        return "\(place) does not decode: \(Self.describe(underlying))\n  \(line)"
    }

    static func describe(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { key in key.intValue.map { "[\($0)]" } ?? "." + key.stringValue }
            return keys.isEmpty ? "the record" : String(keys.joined().drop { $0 == "." })
        }
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context)): expected \(type): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "\(path(context)): expected \(type), found null: \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)): no key \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
