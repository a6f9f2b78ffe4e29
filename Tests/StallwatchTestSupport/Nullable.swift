// A record key that a test must tell apart as absent, null or set: `"durationMs": null` is not a missing key.

/// The value of a key that may be missing, present as `null`, or present with a value.
///
/// A plain `Optional` property decodes both a missing key and `null` as `nil`. Use `Nullable` for the keys
/// whose null-ness a test asserts (an unfinished stall's `durationMs`, an agent-mode `resolutionMs`) and for keys
/// that only some commands or options write (`fps` in the summary). A value of the wrong type still fails to
/// decode.
public enum Nullable<Value> {
    /// The key is not in the record.
    case absent
    /// The key is in the record with the value `null`.
    case null
    /// The key is in the record with this value.
    case value(Value)

    /// The value, or nil when the key is absent or null.
    public var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }
}

extension Nullable: Equatable where Value: Equatable {}
extension Nullable: Sendable where Value: Sendable {}

extension Nullable: Decodable where Value: Decodable {
    /// Reached only when a `Nullable` is decoded on its own (e.g. as an array element): the key is present.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .null : .value(try container.decode(Value.self))
    }
}

extension KeyedDecodingContainer {
    /// Decodes a `Nullable` property, telling a missing key (`.absent`) from `null` (`.null`).
    ///
    /// Synthesized `init(from:)` calls `decode(_:forKey:)` for a non-optional property; this more specific
    /// overload is chosen for `Nullable` properties, so a missing key is not an error.
    public func decode<Value: Decodable>(_ type: Nullable<Value>.Type, forKey key: Key) throws -> Nullable<Value> {
        guard contains(key) else { return .absent }
        if try decodeNil(forKey: key) { return .null }
        return .value(try decode(Value.self, forKey: key))
    }
}
