// The protobuf wire format, as much of it as profile.proto needs: varints, length-delimited fields, packed arrays.

/// Appends protobuf fields to ``bytes``.
struct ProtobufWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func tag(_ field: Int, wireType: UInt64) {
        varint(UInt64(field) << 3 | wireType)
    }

    /// A varint field (`int64`, `uint64`, `bool`); zero is the default and is left out.
    mutating func field(_ field: Int, _ value: Int64) {
        guard value != 0 else { return }
        tag(field, wireType: 0)
        varint(UInt64(bitPattern: value))
    }

    mutating func field(_ field: Int, _ value: UInt64) {
        self.field(field, Int64(bitPattern: value))
    }

    mutating func field(_ field: Int, _ value: Bool) {
        self.field(field, Int64(value ? 1 : 0))
    }

    /// A length-delimited field: bytes, a string, or an embedded message.
    mutating func field(_ field: Int, bytes value: [UInt8]) {
        tag(field, wireType: 2)
        varint(UInt64(value.count))
        bytes += value
    }

    mutating func field(_ field: Int, string value: String) {
        self.field(field, bytes: Array(value.utf8))
    }

    mutating func field(_ field: Int, message body: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        body(&inner)
        self.field(field, bytes: inner.bytes)
    }

    /// A packed repeated varint field.
    mutating func packed(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var inner = ProtobufWriter()
        for value in values { inner.varint(value) }
        self.field(field, bytes: inner.bytes)
    }
}
