// The DWARF reader on hand-built sections: each damage a real file could carry (or a hostile one) must end in a thrown
// DwarfError or an answer, never a trap, a runaway loop or a huge allocation: the reader runs inside `stallwatch` on
// whatever binary a user points it at.
import StallwatchImages
import Testing

@testable import StallwatchSymbols

/// Little-endian bytes, as DWARF writes them.
private func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}

private func uleb(_ value: UInt64) -> [UInt8] {
    var value = value
    var out: [UInt8] = []
    repeat {
        var byte = UInt8(value & 0x7f)
        value >>= 7
        if value != 0 { byte |= 0x80 }
        out.append(byte)
    } while value != 0
    return out
}

/// Abbreviations: 1 a compile unit with children (low_pc, high_pc, stmt_list); 2 a subprogram (low_pc, high_pc,
/// abstract_origin as ref8); 3 a childless compile unit whose name is DW_FORM_indirect.
private let abbreviations: [UInt8] =
    [1, 0x11, 1, 0x11, 0x01, 0x12, 0x07, 0x10, 0x17, 0, 0]
    + [2, 0x2e, 0, 0x11, 0x01, 0x12, 0x07, 0x31, 0x14, 0, 0]
    + [3, 0x11, 0, 0x03, 0x16, 0, 0]
    + [0]

/// A DWARF 4 unit around `dies`.
private func unit(_ dies: [UInt8]) -> [UInt8] {
    let body = bytes(UInt16(4)) + bytes(UInt32(0)) + [8] + dies
    return bytes(UInt32(body.count)) + body
}

/// A compile unit covering [0x1000, 0x1100) with its line program at offset 0, holding `children`.
private func compileUnit(children: [UInt8] = []) -> [UInt8] {
    unit([1] + bytes(UInt64(0x1000)) + bytes(UInt64(0x100)) + bytes(UInt32(0)) + children + [0])
}

/// A DWARF 4 line program for file a.c: one row at 0x1000, the sequence ending at 0x1100.
private func lineProgram(program: [UInt8]? = nil, headerLength: UInt32? = nil) -> [UInt8] {
    let fields: [UInt8] =
        [1, 1, 1, 0xfb, 14, 13] + [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1] + [0] + Array("a.c".utf8)
        + [0, 0, 0, 0] + [0]
    let instructions =
        program ?? ([0, 9, 2] + bytes(UInt64(0x1000)) + [1] + [2] + uleb(0x100) + [0, 1, 1])
    let afterLength = bytes(UInt16(4)) + bytes(headerLength ?? UInt32(fields.count)) + fields + instructions
    return bytes(UInt32(afterLength.count)) + afterLength
}

/// Reads sections given as byte arrays; what the reader said, or the error it threw.
private func read(
    info: [UInt8], abbrev: [UInt8] = abbreviations, line: [UInt8] = lineProgram(), at address: UInt64 = 0x1010
) -> Result<[[SymbolLocation]], DwarfError> {
    readDwarf([".debug_info": info, ".debug_abbrev": abbrev, ".debug_line": line], addresses: [address])
}

/// Names `addresses` with a reader over copies of `sections` (by ELF section name, kept alive for the call): what it
/// said, or the error it threw.
func readDwarf(_ sections: [String: [UInt8]], addresses: [UInt64]) -> Result<[[SymbolLocation]], DwarfError> {
    let buffers = sections.mapValues { bytes in
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        buffer.copyBytes(from: bytes)
        return UnsafeRawBufferPointer(rebasing: buffer[..<bytes.count])
    }
    defer { buffers.values.forEach { UnsafeMutableRawBufferPointer(mutating: $0).deallocate() } }
    do throws(DwarfError) {
        let reader = try DwarfReader(sections: DwarfSections { buffers[$0] })
        return .success(try reader.locations(for: addresses))
    } catch {
        return .failure(error)
    }
}

private func threw(_ result: Result<[[SymbolLocation]], DwarfError>) -> Bool {
    if case .failure = result { return true }
    return false
}

@Suite struct DwarfMalformedTests {
    /// The sections built here are sound: the damaged variants below differ in one place each.
    @Test func theHandBuiltUnitReads() throws {
        let locations = try read(info: compileUnit()).get()
        #expect(locations == [[SymbolLocation(function: nil, file: "a.c", line: 1, column: 0)]])
    }

    /// A SLEB128 may be padded to nine or ten bytes; the last one's sign bit then sits at bit 63.
    @Test func paddedSignedNumbersDecode() throws {
        let padded: [UInt8] = Array(repeating: 0xff, count: 8) + [0x7f]
        try padded.withUnsafeBytes { raw in
            var cursor = try DwarfSection(raw).cursor(at: 0)
            #expect(try cursor.sleb() == -1)
        }
        let long: [UInt8] = Array(repeating: 0x80, count: 9) + [0x7f]
        try long.withUnsafeBytes { raw in
            var cursor = try DwarfSection(raw).cursor(at: 0)
            _ = try cursor.sleb()
            #expect(cursor.atEnd)
        }
    }

    @Test func noReadableDebugInfoThrows() {
        #expect(threw(read(info: [])))
    }

    /// 64-bit DWARF lengths near 2^64 for a unit, a line program and a line program's header.
    @Test func hugeLengthsThrow() {
        let huge: [UInt8] = [0xff, 0xff, 0xff, 0xff] + Array(repeating: 0xff, count: 8)
        #expect(threw(read(info: huge)))
        #expect(threw(read(info: compileUnit(), line: huge)))
        #expect(threw(read(info: compileUnit(), line: lineProgram(headerLength: 0xffff_fff0))))
    }

    @Test func anExtendedOpcodeLongerThanItsProgramThrows() {
        let program: [UInt8] = [0] + Array(repeating: 0xff, count: 9) + [0x01]
        #expect(threw(read(info: compileUnit(), line: lineProgram(program: program))))
    }

    /// A subprogram whose abstract origin points far outside its unit, in a unit that is not the first.
    @Test func aReferenceOutOfItsUnitIsIgnored() throws {
        let subprogram: [UInt8] = [2] + bytes(UInt64(0x1000)) + bytes(UInt64(0x100)) + bytes(UInt64.max)
        let info = unit([3, 0x08] + Array("x".utf8) + [0]) + compileUnit(children: subprogram)
        let locations = try read(info: info).get()
        #expect(locations.first?.first?.function == nil)
        #expect(locations.first?.first?.line == 1)
    }

    /// DW_FORM_indirect naming DW_FORM_indirect, four million times over: refused at once, no deep recursion.
    @Test func indirectFormsDoNotNest() {
        let info = unit([3] + Array(repeating: 0x16, count: 4 << 20))
        #expect(threw(read(info: info)))
    }

    /// A DWARF 5 line table header announcing 16 million directories described by no fields at all, and otherwise
    /// sound: refused, rather than read as 16 million empty names (seconds, and hundreds of megabytes).
    @Test func aTableOfEmptyEntriesIsRefused() {
        let info = compileUnit()
        var fields: [UInt8] = [1, 1, 1, 0xfb, 14, 13] + [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1]
        fields += [0] + uleb(0xff_fffe)  // no directory entry formats, yet 16 million directories
        fields += [1, 1, 0x08] + uleb(1) + Array("a.c".utf8) + [0]  // one file: DW_LNCT_path as DW_FORM_string
        let program: [UInt8] = [0, 9, 2] + bytes(UInt64(0x1000)) + [1] + [2] + uleb(0x100) + [0, 1, 1]
        let afterLength = bytes(UInt16(5)) + [8, 0] + bytes(UInt32(fields.count)) + fields + program
        let line = bytes(UInt32(afterLength.count)) + afterLength
        #expect(threw(read(info: info, line: line)))
    }
}
