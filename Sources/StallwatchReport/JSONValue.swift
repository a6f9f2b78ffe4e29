// A minimal JSON writer that keeps keys in the order given, so every record starts with "event".

/// A JSON value whose objects keep their keys in insertion order.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized() == rhs.serialized() }

    /// A number of milliseconds from nanoseconds, rounded to microseconds.
    static func milliseconds(_ nanoseconds: UInt64) -> JSONValue {
        .double((Double(nanoseconds) / 1_000).rounded() / 1_000)
    }

    static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func optional(_ value: Int?) -> JSONValue { value.map { .int(Int64($0)) } ?? .null }

    /// A hexadecimal string: JSON numbers lose precision past 2^53, and addresses are read as hex anyway.
    static func hex(_ value: UInt64) -> JSONValue { .string("0x" + String(value, radix: 16)) }

    /// Compact serialization on one line.
    public func serialized() -> String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value):
            if value.isFinite {
                output += value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            } else {
                output += "null"
            }
        case .string(let value): JSONValue.writeString(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let pairs):
            output += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { output += "," }
                JSONValue.writeString(key, to: &output)
                output += ":"
                value.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
