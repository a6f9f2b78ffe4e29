// A pull parser over one line of JSON bytes: reads what the record reader asks for and skips the rest, so a record
// is read without building a tree of it.

import Glibc

/// Why a line is not the JSON the reader expected, at which byte.
public struct JSONScanError: Error, Equatable, Sendable {
    public var offset: Int
    public var message: String
}

/// Reads JSON values from a byte buffer one at a time, in the order they appear.
///
/// Strings are decoded (escapes, `\u` surrogate pairs); numbers are read as `Double`. ``skipValue()`` returns
/// the byte range of the value it skipped, so a caller can intern values by their bytes.
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool {
        mutating get {
            skipWhitespace()
            return position >= bytes.count
        }
    }

    func fail(_ message: String) -> JSONScanError {
        JSONScanError(offset: position, message: message)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func peek() throws(JSONScanError) -> UInt8 {
        skipWhitespace()
        guard position < bytes.count else { throw fail("unexpected end of line") }
        return bytes[position]
    }

    mutating func expect(_ byte: UInt8) throws(JSONScanError) {
        guard try peek() == byte else { throw fail("expected '\(Character(Unicode.Scalar(byte)))'") }
        position += 1
    }

    /// Calls `body` with each key of an object; `body` must read or skip the key's value.
    mutating func readObject(_ body: (inout JSONScanner, String) throws(JSONScanError) -> Void) throws(JSONScanError) {
        try expect(UInt8(ascii: "{"))
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            let key = try readString()
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return
            default: throw fail("expected ',' or '}' in an object")
            }
        }
    }

    /// Calls `body` once per element of an array; `body` must read or skip the element.
    mutating func readArray(_ body: (inout JSONScanner) throws(JSONScanError) -> Void) throws(JSONScanError) {
        try expect(UInt8(ascii: "["))
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            try body(&self)
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return
            default: throw fail("expected ',' or ']' in an array")
            }
        }
    }

    /// Consumes `null` if it comes next.
    mutating func readNull() throws(JSONScanError) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    mutating func readOptionalString() throws(JSONScanError) -> String? {
        try readNull() ? nil : try readString()
    }

    mutating func readOptionalNumber() throws(JSONScanError) -> Double? {
        try readNull() ? nil : try readNumber()
    }

    /// A whole number that fits in 32 bits (ids, pids, lines, versions); `nil` for null or anything else, so a
    /// record's `1e300` cannot trap a conversion.
    mutating func readOptionalInteger() throws(JSONScanError) -> Int? {
        guard let value = try readOptionalNumber(), value.isFinite, value == value.rounded(),
            abs(value) <= Double(Int32.max)
        else { return nil }
        return Int(value)
    }

    /// A time in milliseconds, from 0 to about thirty years; `nil` for null, negative, infinite or larger values,
    /// so every export can turn it into nanoseconds or microseconds without overflow.
    mutating func readOptionalMilliseconds() throws(JSONScanError) -> Double? {
        guard let value = try readOptionalNumber(), value.isFinite, value >= 0, value <= 1e12 else { return nil }
        return value
    }

    mutating func readBool() throws(JSONScanError) -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw fail("expected true or false")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONScanError) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw fail("unexpected end of line") }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw fail("expected \(word)")
        }
        position += count
    }

    mutating func readNumber() throws(JSONScanError) -> Double {
        _ = try peek()
        let start = position
        while position < bytes.count, Self.isNumberByte(bytes[position]) { position += 1 }
        guard position > start,
            let value = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
        else { throw JSONScanError(offset: start, message: "expected a number") }
        return value
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }

    mutating func readString() throws(JSONScanError) -> String {
        try expect(UInt8(ascii: "\""))
        let start = position
        // The common case: no escapes, decoded straight from the buffer.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            position += 1
        }
        position = start
        return try readEscapedString()
    }

    private mutating func readEscapedString() throws(JSONScanError) -> String {
        var scalars: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw fail("unexpected end of line") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "u"):
                    var code = try readHex4()
                    if (0xD800..<0xDC00).contains(code), position + 1 < bytes.count,
                        bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                    {
                        position += 2
                        let low = try readHex4()
                        // A high surrogate without its low half is not a character: U+FFFD, then what followed.
                        if (0xDC00..<0xE000).contains(low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            scalars.append(contentsOf: "\u{FFFD}".utf8)
                            code = low
                        }
                    }
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default: scalars.append(escape)
                }
            default: scalars.append(byte)
            }
        }
        throw fail("unterminated string")
    }

    private mutating func readHex4() throws(JSONScanError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail("unexpected end of line") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            position += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Skips one value of any kind and returns the byte range it took.
    @discardableResult
    mutating func skipValue() throws(JSONScanError) -> Range<Int> {
        let first = try peek()
        let start = position
        switch first {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    try skipString()
                    continue
                }
                position += 1
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    depth += 1
                } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return start..<position }
                }
            }
            throw fail("unexpected end of line")
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try readBool()
        case UInt8(ascii: "n"): _ = try readNull()
        default: _ = try readNumber()
        }
        return start..<position
    }

    /// Skips a string, finding each quote with memchr (most of a record's bytes are inside strings); a quote
    /// after an odd number of backslashes is escaped.
    private mutating func skipString() throws(JSONScanError) {
        position += 1
        guard let base = bytes.baseAddress else { throw fail("unterminated string") }
        while position < bytes.count {
            guard let found = memchr(base + position, Int32(UInt8(ascii: "\"")), bytes.count - position) else { break }
            let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var backslashes = 0
            while quote - backslashes - 1 >= position, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") {
                backslashes += 1
            }
            position = quote + 1
            if backslashes % 2 == 0 { return }
        }
        position = bytes.count
        throw fail("unterminated string")
    }
}
