// Bounds-checked little-endian reading of DWARF section bytes.

/// Why a DWARF reader gave up on an image: its data is malformed or uses something this reader does not decode
/// (split DWARF, an unknown form). The caller names the image some other way.
public struct DwarfError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A section's bytes, not owned: the caller keeps them mapped while any reader uses them.
public struct DwarfSection: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    public static let empty = DwarfSection(UnsafeRawBufferPointer(start: nil, count: 0))

    var count: Int { bytes.count }

    /// A cursor at `offset`, reading up to the end of the section.
    func cursor(at offset: Int) throws(DwarfError) -> DwarfCursor {
        guard offset >= 0, offset <= bytes.count else { throw DwarfError("offset \(offset) outside a section") }
        return DwarfCursor(bytes: bytes, offset: offset, end: bytes.count)
    }

    /// The NUL-terminated string at `offset`.
    func string(at offset: UInt64) throws(DwarfError) -> String {
        var cursor = try self.cursor(at: Int(clamping: offset))
        return try cursor.cString()
    }
}

/// Reads one section forward. Every read checks the section's end: malformed data throws, never traps.
struct DwarfCursor {
    let bytes: UnsafeRawBufferPointer
    var offset: Int
    /// Reads stop here (a unit's or a line program's end, or the section's).
    var end: Int

    var atEnd: Bool { offset >= end }

    @inline(__always)
    private mutating func take(_ size: Int) throws(DwarfError) -> Int {
        guard size >= 0, end - offset >= size else { throw DwarfError("read past the end of a DWARF section") }
        defer { offset += size }
        return offset
    }

    @inline(__always)
    mutating func u8() throws(DwarfError) -> UInt8 {
        bytes[try take(1)]
    }

    @inline(__always)
    mutating func u16() throws(DwarfError) -> UInt16 {
        UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(2), as: UInt16.self))
    }

    @inline(__always)
    mutating func u32() throws(DwarfError) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(4), as: UInt32.self))
    }

    @inline(__always)
    mutating func u64() throws(DwarfError) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(8), as: UInt64.self))
    }

    /// An unsigned integer of 1, 2, 3, 4 or 8 bytes.
    mutating func unsigned(size: Int) throws(DwarfError) -> UInt64 {
        switch size {
        case 1: return UInt64(try u8())
        case 2: return UInt64(try u16())
        case 3:
            let low = UInt64(try u16())
            return low | UInt64(try u8()) << 16
        case 4: return UInt64(try u32())
        case 8: return try u64()
        default: throw DwarfError("unsupported integer size \(size)")
        }
    }

    @inline(__always)
    mutating func uleb() throws(DwarfError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            if shift < 64 { result |= UInt64(byte & 0x7f) << shift }
            shift += 7
            if byte & 0x80 == 0 { return result }
        }
    }

    @inline(__always)
    mutating func sleb() throws(DwarfError) -> Int64 {
        var result: Int64 = 0
        var shift: Int64 = 0
        var byte: UInt8
        repeat {
            byte = try u8()
            if shift < 64 { result |= Int64(byte & 0x7f) << shift }
            shift += 7
        } while byte & 0x80 != 0
        if shift < 64, byte & 0x40 != 0 { result |= Int64(-1) << shift }
        return result
    }

    /// Where a span of `length` bytes starting here ends, if it fits before ``end``.
    func end(after length: UInt64) throws(DwarfError) -> Int {
        guard length <= UInt64(end - offset) else { throw DwarfError("length \(length) runs past its section") }
        return offset + Int(length)
    }

    mutating func skip(_ count: Int) throws(DwarfError) {
        _ = try take(count)
    }

    mutating func skip(_ count: UInt64) throws(DwarfError) {
        guard count <= UInt64(Int.max) else { throw DwarfError("length \(count) too large") }
        _ = try take(Int(count))
    }

    /// A NUL-terminated string, read as UTF-8.
    mutating func cString() throws(DwarfError) -> String {
        let start = offset
        let length = try skipCString()
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]), as: UTF8.self)
    }

    /// Skips a NUL-terminated string; returns its length without the NUL.
    @discardableResult
    mutating func skipCString() throws(DwarfError) -> Int {
        let start = offset
        while true {
            guard offset < end else { throw DwarfError("unterminated string") }
            if bytes[offset] == 0 { break }
            offset += 1
        }
        offset += 1
        return offset - 1 - start
    }

    /// A unit length: 32-bit, or 0xffffffff and a 64-bit length (64-bit DWARF). Returns the length and the size of
    /// section offsets in the unit.
    mutating func unitLength() throws(DwarfError) -> (length: UInt64, offsetSize: Int) {
        let short = try u32()
        if short == 0xffff_ffff { return (try u64(), 8) }
        guard short < 0xffff_fff0 else { throw DwarfError("reserved unit length \(short)") }
        return (UInt64(short), 4)
    }
}
