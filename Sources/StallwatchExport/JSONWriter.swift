// Writes JSON straight into a byte buffer: exports can be large, and the HTML page embeds the same text.

/// Appends JSON tokens to ``bytes``; the caller writes commas through ``comma(_:)`` or the element helpers.
///
/// Every `<` in a string is written as `\u003c`, so the text can sit inside an HTML `<script>` element: no
/// `</script>` or `<!--` can appear in it.
struct JSONWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 1 << 16) {
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case UInt8(ascii: "<"): raw("\\u003c")
            case 0..<0x20:
                let hex = String(byte, radix: 16)
                raw("\\u00" + (hex.count == 1 ? "0" : "") + hex)
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func optionalString(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    mutating func number(_ value: Double) {
        guard value.isFinite else { return raw("null") }
        if value == value.rounded(), abs(value) < 1e15 {
            raw(String(Int64(value)))
        } else {
            raw(String((value * 1000).rounded() / 1000))
        }
    }

    mutating func number(_ value: Int) {
        raw(String(value))
    }

    mutating func optionalNumber(_ value: Double?) {
        if let value { number(value) } else { raw("null") }
    }

    /// `"key":`, preceded by a comma unless it is the first key.
    mutating func key(_ name: String, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func comma(_ needed: Bool) {
        if needed { bytes.append(UInt8(ascii: ",")) }
    }
}
