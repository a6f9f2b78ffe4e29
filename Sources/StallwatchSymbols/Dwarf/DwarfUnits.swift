// Compilation units (.debug_info): their headers, the code each covers, and the values their attributes point to.

/// The sections a DWARF reader uses; any may be empty.
public struct DwarfSections: Sendable {
    public var info: DwarfSection
    public var abbrev: DwarfSection
    public var line: DwarfSection
    public var str: DwarfSection
    public var lineStr: DwarfSection
    public var strOffsets: DwarfSection
    public var addr: DwarfSection
    /// DWARF 4 range lists.
    public var ranges: DwarfSection
    /// DWARF 5 range lists.
    public var rnglists: DwarfSection

    /// The ELF section names, in the order of the properties.
    public static let names = [
        ".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str", ".debug_str_offsets",
        ".debug_addr", ".debug_ranges", ".debug_rnglists",
    ]

    /// - Parameter section: each of ``names``' bytes, or nil when the file has no such section.
    public init(_ section: (String) -> UnsafeRawBufferPointer?) {
        func named(_ name: String) -> DwarfSection { section(name).map(DwarfSection.init) ?? .empty }
        info = named(".debug_info")
        abbrev = named(".debug_abbrev")
        line = named(".debug_line")
        str = named(".debug_str")
        lineStr = named(".debug_line_str")
        strOffsets = named(".debug_str_offsets")
        addr = named(".debug_addr")
        ranges = named(".debug_ranges")
        rnglists = named(".debug_rnglists")
    }
}

/// One unit of `.debug_info` and what its unit DIE says about all the DIEs in it.
struct DwarfUnit {
    /// Where its header starts in `.debug_info`; unit-relative references count from here.
    let offset: Int
    /// Where its first DIE (the unit DIE) starts, and where the unit ends.
    let dieOffset: Int
    let end: Int
    let format: DwarfFormat
    /// Where its abbreviation table starts in `.debug_abbrev`.
    let abbreviationOffset: UInt64
    /// The unit's base address (its `DW_AT_low_pc`), which range lists count from.
    var baseAddress: UInt64 = 0
    var strOffsetsBase: UInt64
    var addrBase: UInt64
    var rnglistsBase: UInt64
    /// The code it covers.
    var ranges: [Range<UInt64>] = []
    /// Its line program's offset in `.debug_line`.
    var lineProgram: UInt64?
    /// Its `DW_AT_comp_dir`, read when its line table is (a string for each of hundreds of units costs).
    var compilationDirectory: DwarfValue?
    /// Split DWARF: the DIEs are in another file, which this reader does not follow.
    var isSkeleton = false

    init(offset: Int, dieOffset: Int, end: Int, format: DwarfFormat, abbreviationOffset: UInt64) {
        self.offset = offset
        self.dieOffset = dieOffset
        self.end = end
        self.format = format
        self.abbreviationOffset = abbreviationOffset
        // DWARF 5's defaults when the unit DIE has no base attribute: just past the sections' headers.
        strOffsetsBase = UInt64(format.offsetSize == 8 ? 16 : 8)
        addrBase = UInt64(format.offsetSize == 8 ? 16 : 8)
        rnglistsBase = UInt64(format.offsetSize == 8 ? 20 : 12)
    }

    func covers(_ address: UInt64) -> Bool {
        ranges.contains { $0.contains(address) }
    }
}

/// Reads every unit header and unit DIE of `.debug_info`: which code each unit covers.
struct DwarfUnitIndex {
    let sections: DwarfSections
    private(set) var units: [DwarfUnit] = []

    /// Each unit's abbreviation table, parsed when a unit is first walked.
    private let tables = AbbreviationTables()

    init(sections: DwarfSections) throws(DwarfError) {
        self.sections = sections
        // An image with DWARF whose .debug_info cannot be read (compressed in a format libelf lacks) is not one
        // without DWARF: let the caller name it another way.
        guard sections.info.count > 0 else { throw DwarfError("no readable .debug_info") }
        var offset = 0
        while offset < sections.info.count {
            var cursor = try sections.info.cursor(at: offset)
            let (length, offsetSize) = try cursor.unitLength()
            let end = try cursor.end(after: length)
            guard end > cursor.offset else { throw DwarfError("empty unit") }
            defer { offset = end }
            cursor.end = end
            let version = Int(try cursor.u16())
            guard (2...5).contains(version) else { throw DwarfError("DWARF version \(version)") }
            var unitType: UInt8 = 1  // DW_UT_compile
            let abbrevOffset: UInt64
            let addressSize: Int
            if version >= 5 {
                unitType = try cursor.u8()
                addressSize = Int(try cursor.u8())
                abbrevOffset = try cursor.unsigned(size: offsetSize)
                switch unitType {
                case 1, 3: break  // compile, partial
                case 4, 5: try cursor.skip(8)  // skeleton, split compile: a DWO id
                default: continue  // type units hold no code
                }
            } else {
                abbrevOffset = try cursor.unsigned(size: offsetSize)
                addressSize = Int(try cursor.u8())
            }
            guard addressSize == 4 || addressSize == 8 else { throw DwarfError("address size \(addressSize)") }
            let format = DwarfFormat(version: version, offsetSize: offsetSize, addressSize: addressSize)
            var unit = DwarfUnit(
                offset: offset, dieOffset: cursor.offset, end: end, format: format, abbreviationOffset: abbrevOffset)
            try readUnitDIE(&unit)
            if unitType == 4 || unitType == 5 { unit.isSkeleton = true }
            units.append(unit)
        }
    }

    private struct Key: Hashable {
        let offset: UInt64
        let format: DwarfFormat
    }

    private final class AbbreviationTables {
        var parsed: [Key: DwarfAbbreviationTable] = [:]
    }

    /// The unit's abbreviation table.
    func abbreviations(of unit: DwarfUnit) throws(DwarfError) -> DwarfAbbreviationTable {
        let key = Key(offset: unit.abbreviationOffset, format: unit.format)
        if let known = tables.parsed[key] { return known }
        let table = try DwarfAbbreviationTable(
            section: sections.abbrev, offset: unit.abbreviationOffset, format: unit.format)
        tables.parsed[key] = table
        return table
    }

    /// The unit holding the DIE at `offset` of `.debug_info`.
    func unit(holding offset: Int) -> DwarfUnit? {
        var low = 0
        var high = units.count
        while low < high {
            let middle = (low + high) / 2
            if units[middle].end <= offset { low = middle + 1 } else { high = middle }
        }
        return low < units.count && units[low].offset <= offset ? units[low] : nil
    }

    /// Fills the unit's bases, ranges, line program and directory from its unit DIE.
    ///
    /// Reads the DIE's abbreviation straight from `.debug_abbrev` (usually the table's first entry) rather than
    /// parsing the unit's table: an index of hundreds of units would parse hundreds of tables for one entry each.
    private func readUnitDIE(_ unit: inout DwarfUnit) throws(DwarfError) {
        var cursor = try sections.info.cursor(at: unit.dieOffset)
        cursor.end = unit.end
        let code = try cursor.uleb()
        guard code != 0 else { return }
        var specs = try sections.abbrev.cursor(at: Int(clamping: unit.abbreviationOffset))
        while true {
            let found = try specs.uleb()
            guard found != 0 else { throw DwarfError("unknown abbreviation code \(code)") }
            let tag = try specs.uleb()
            _ = try specs.u8()  // has children
            if found == code {
                guard tag == DwarfTag.compileUnit || tag == DwarfTag.partialUnit || tag == DwarfTag.skeletonUnit else {
                    return
                }
                if tag == DwarfTag.skeletonUnit { unit.isSkeleton = true }
                break
            }
            // Not this one: skip its attribute specifications.
            while true {
                let attribute = try specs.uleb()
                let form = try specs.uleb()
                if attribute == 0 && form == 0 { break }
                if form == DwarfForm.implicitConst { _ = try specs.sleb() }
            }
        }
        var low: DwarfValue?
        var high: DwarfValue?
        var ranges: DwarfValue?
        while true {
            let attribute = try specs.uleb()
            let form = try specs.uleb()
            if attribute == 0 && form == 0 { break }
            let constant = form == DwarfForm.implicitConst ? try specs.sleb() : 0
            switch attribute {
            case DwarfAttribute.lowPC, DwarfAttribute.highPC, DwarfAttribute.ranges, DwarfAttribute.compDir,
                DwarfAttribute.stmtList, DwarfAttribute.strOffsetsBase, DwarfAttribute.addrBase,
                DwarfAttribute.gnuAddrBase, DwarfAttribute.rnglistsBase, DwarfAttribute.gnuDwoName:
                let value = try unit.format.read(form, implicitConstant: constant, &cursor)
                switch attribute {
                case DwarfAttribute.lowPC: low = value
                case DwarfAttribute.highPC: high = value
                case DwarfAttribute.ranges: ranges = value
                case DwarfAttribute.compDir: unit.compilationDirectory = value
                case DwarfAttribute.stmtList: unit.lineProgram = value.number
                case DwarfAttribute.strOffsetsBase: unit.strOffsetsBase = value.number ?? unit.strOffsetsBase
                case DwarfAttribute.rnglistsBase: unit.rnglistsBase = value.number ?? unit.rnglistsBase
                case DwarfAttribute.gnuDwoName: unit.isSkeleton = true
                default: unit.addrBase = value.number ?? unit.addrBase
                }
            default:
                try unit.format.skip(form, &cursor)
            }
        }
        // Resolved once all attributes are read: the bases may come after the values that need them.
        if let low { unit.baseAddress = try address(low, in: unit) ?? 0 }
        unit.ranges = try codeRanges(low: low, high: high, ranges: ranges, in: unit)
    }

    // MARK: - Values

    /// The address an attribute value holds (directly or through `.debug_addr`).
    func address(_ value: DwarfValue, in unit: DwarfUnit) throws(DwarfError) -> UInt64? {
        switch value {
        case .address(let address): return address
        case .addressIndex(let index): return try indexedAddress(index, in: unit)
        default: return nil
        }
    }

    private func indexedAddress(_ index: UInt64, in unit: DwarfUnit) throws(DwarfError) -> UInt64 {
        let size = UInt64(unit.format.addressSize)
        var cursor = try sections.addr.cursor(at: Int(clamping: unit.addrBase &+ index &* size))
        return try cursor.unsigned(size: unit.format.addressSize)
    }

    /// The string an attribute value holds or points to.
    func string(_ value: DwarfValue, in unit: DwarfUnit) throws(DwarfError) -> String? {
        switch value {
        case .stringOffset(let offset): return try sections.str.string(at: offset)
        case .lineStringOffset(let offset): return try sections.lineStr.string(at: offset)
        case .inlineString(let offset): return try sections.info.string(at: UInt64(offset))
        case .stringIndex(let index):
            let size = UInt64(unit.format.offsetSize)
            var cursor = try sections.strOffsets.cursor(at: Int(clamping: unit.strOffsetsBase &+ index &* size))
            return try sections.str.string(at: try cursor.unsigned(size: unit.format.offsetSize))
        default: return nil
        }
    }

    /// The code a DIE covers, from its `DW_AT_low_pc`/`DW_AT_high_pc` or `DW_AT_ranges`.
    func codeRanges(low: DwarfValue?, high: DwarfValue?, ranges: DwarfValue?, in unit: DwarfUnit) throws(DwarfError)
        -> [Range<UInt64>]
    {
        if let ranges { return try rangeList(ranges, in: unit) }
        guard let low, let high, let start = try address(low, in: unit) else { return [] }
        let end: UInt64
        switch high {
        case .address, .addressIndex: end = try address(high, in: unit) ?? start
        case .constant(let length): end = start &+ length
        default: return []
        }
        return start < end ? [start..<end] : []
    }

    private func rangeList(_ value: DwarfValue, in unit: DwarfUnit) throws(DwarfError) -> [Range<UInt64>] {
        if unit.format.version < 5 {
            // DWARF 2 and 3 give the offset as a constant (data4, data8), DWARF 4 as a section offset.
            guard let offset = value.number else { return [] }
            return try rangesV4(at: offset, in: unit)
        }
        let offset: UInt64
        switch value {
        case .sectionOffset(let direct): offset = direct
        case .listIndex(let index):
            let size = UInt64(unit.format.offsetSize)
            var cursor = try sections.rnglists.cursor(at: Int(clamping: unit.rnglistsBase &+ index &* size))
            offset = unit.rnglistsBase &+ (try cursor.unsigned(size: unit.format.offsetSize))
        default: return []
        }
        return try rangesV5(at: offset, in: unit)
    }

    /// A `.debug_ranges` list: pairs of offsets from the base address, a base address selection, an end.
    private func rangesV4(at offset: UInt64, in unit: DwarfUnit) throws(DwarfError) -> [Range<UInt64>] {
        var cursor = try sections.ranges.cursor(at: Int(clamping: offset))
        let size = unit.format.addressSize
        let selection: UInt64 = size == 8 ? .max : 0xffff_ffff
        var base = unit.baseAddress
        var result: [Range<UInt64>] = []
        while true {
            let start = try cursor.unsigned(size: size)
            let end = try cursor.unsigned(size: size)
            if start == 0 && end == 0 { return result }
            if start == selection {
                base = end
            } else {
                // Offsets from a base near the top of the address space can wrap: such a range is dropped, never
                // formed upside down (which traps).
                let (low, high) = (base &+ start, base &+ end)
                if low < high { result.append(low..<high) }
            }
        }
    }

    /// A `.debug_rnglists` list (DWARF 5).
    private func rangesV5(at offset: UInt64, in unit: DwarfUnit) throws(DwarfError) -> [Range<UInt64>] {
        var cursor = try sections.rnglists.cursor(at: Int(clamping: offset))
        let size = unit.format.addressSize
        var base = unit.baseAddress
        var result: [Range<UInt64>] = []
        func add(_ start: UInt64, _ end: UInt64) {
            if start < end { result.append(start..<end) }
        }
        while true {
            switch try cursor.u8() {
            case 0: return result  // DW_RLE_end_of_list
            case 1: base = try indexedAddress(try cursor.uleb(), in: unit)  // base_addressx
            case 2:  // startx_endx
                let start = try indexedAddress(try cursor.uleb(), in: unit)
                add(start, try indexedAddress(try cursor.uleb(), in: unit))
            case 3:  // startx_length
                let start = try indexedAddress(try cursor.uleb(), in: unit)
                add(start, start &+ (try cursor.uleb()))
            case 4:  // offset_pair
                let start = try cursor.uleb()
                add(base &+ start, base &+ (try cursor.uleb()))
            case 5: base = try cursor.unsigned(size: size)  // base_address
            case 6:  // start_end
                let start = try cursor.unsigned(size: size)
                add(start, try cursor.unsigned(size: size))
            case 7:  // start_length
                let start = try cursor.unsigned(size: size)
                add(start, start &+ (try cursor.uleb()))
            case let kind: throw DwarfError("unknown range list entry \(kind)")
            }
        }
    }
}

extension DwarfValue {
    /// A constant or section offset, as a number.
    var number: UInt64? {
        switch self {
        case .constant(let value), .sectionOffset(let value): return value
        default: return nil
        }
    }
}
