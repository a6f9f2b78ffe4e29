// Abbreviation tables (.debug_abbrev): the shape of every DIE in a unit.

/// One attribute of an abbreviation: which attribute, in which form.
struct DwarfAttributeSpec {
    let attribute: UInt64
    let form: UInt64
    /// The value of a `DW_FORM_implicit_const` attribute, stored in the abbreviation itself.
    let implicitConstant: Int64
}

/// One abbreviation: a DIE's tag, whether it has children, and its attributes in order.
struct DwarfAbbreviation {
    let tag: UInt64
    let hasChildren: Bool
    let attributes: [DwarfAttributeSpec]
    /// The bytes all its attribute values take when every form has a fixed size in its unit: such a DIE is skipped in
    /// one step. Nil when some form's size varies (strings, LEB128 numbers, blocks).
    let fixedSize: Int?
}

/// A unit's abbreviation table, looked up by code and parsed only as far as the codes asked for: indexing an image
/// reads each unit's first DIE, whose abbreviation usually comes first, and only units walked need the rest.
final class DwarfAbbreviationTable {
    /// Codes are usually 1, 2, 3...: most are found by index.
    private var dense: [DwarfAbbreviation?] = []
    private var sparse: [UInt64: DwarfAbbreviation] = [:]
    /// Where the next unparsed abbreviation starts; nil once the table's end was reached.
    private var unparsed: DwarfCursor?
    private let format: DwarfFormat

    /// The table at `offset` of `.debug_abbrev`, for a unit with these sizes (which fix the sizes of some forms).
    init(section: DwarfSection, offset: UInt64, format: DwarfFormat) throws(DwarfError) {
        unparsed = try section.cursor(at: Int(clamping: offset))
        self.format = format
    }

    func abbreviation(_ code: UInt64) throws(DwarfError) -> DwarfAbbreviation {
        while true {
            if code < UInt64(dense.count), let found = dense[Int(code)] { return found }
            if let found = sparse[code] { return found }
            guard try parseNext() else { throw DwarfError("unknown abbreviation code \(code)") }
        }
    }

    /// Parses the next abbreviation; false at the end of the table.
    private func parseNext() throws(DwarfError) -> Bool {
        guard var cursor = unparsed else { return false }
        let code = try cursor.uleb()
        guard code != 0 else {
            unparsed = nil
            return false
        }
        let tag = try cursor.uleb()
        let hasChildren = try cursor.u8() != 0
        var attributes: [DwarfAttributeSpec] = []
        var fixedSize: Int? = 0
        while true {
            let attribute = try cursor.uleb()
            let form = try cursor.uleb()
            if attribute == 0 && form == 0 { break }
            let constant = form == DwarfForm.implicitConst ? try cursor.sleb() : 0
            attributes.append(DwarfAttributeSpec(attribute: attribute, form: form, implicitConstant: constant))
            if let size = fixedSize { fixedSize = format.fixedSize(of: form).map { size + $0 } }
        }
        unparsed = cursor
        let abbreviation = DwarfAbbreviation(
            tag: tag, hasChildren: hasChildren, attributes: attributes, fixedSize: fixedSize)
        if code < 65_536 {
            let index = Int(code)
            if dense.count <= index { dense.append(contentsOf: repeatElement(nil, count: index + 1 - dense.count)) }
            if dense[index] == nil { dense[index] = abbreviation }
        } else if sparse[code] == nil {
            sparse[code] = abbreviation
        }
        return true
    }
}

/// The sizes that fix how big some forms are in one unit.
struct DwarfFormat: Hashable {
    let version: Int
    let offsetSize: Int
    let addressSize: Int

    /// The size of a value in `form`, or nil if it varies.
    func fixedSize(of form: UInt64) -> Int? {
        switch form {
        case DwarfForm.flagPresent, DwarfForm.implicitConst: return 0
        case DwarfForm.data1, DwarfForm.ref1, DwarfForm.flag, DwarfForm.strx1, DwarfForm.addrx1: return 1
        case DwarfForm.data2, DwarfForm.ref2, DwarfForm.strx2, DwarfForm.addrx2: return 2
        case DwarfForm.strx3, DwarfForm.addrx3: return 3
        case DwarfForm.data4, DwarfForm.ref4, DwarfForm.strx4, DwarfForm.addrx4, DwarfForm.refSup4: return 4
        case DwarfForm.data8, DwarfForm.ref8, DwarfForm.refSig8, DwarfForm.refSup8: return 8
        case DwarfForm.data16: return 16
        case DwarfForm.addr: return addressSize
        case DwarfForm.strp, DwarfForm.secOffset, DwarfForm.lineStrp, DwarfForm.strpSup, DwarfForm.gnuRefAlt,
            DwarfForm.gnuStrpAlt:
            return offsetSize
        case DwarfForm.refAddr: return version <= 2 ? addressSize : offsetSize
        default: return nil
        }
    }

    /// Moves past one value in `form`.
    func skip(_ form: UInt64, _ cursor: inout DwarfCursor) throws(DwarfError) {
        if let size = fixedSize(of: form) { return try cursor.skip(size) }
        switch form {
        case DwarfForm.string: try cursor.skipCString()
        case DwarfForm.block1: try cursor.skip(Int(try cursor.u8()))
        case DwarfForm.block2: try cursor.skip(Int(try cursor.u16()))
        case DwarfForm.block4: try cursor.skip(Int(try cursor.u32()))
        case DwarfForm.block, DwarfForm.exprloc: try cursor.skip(try cursor.uleb())
        case DwarfForm.sdata: _ = try cursor.sleb()
        case DwarfForm.udata, DwarfForm.refUdata, DwarfForm.strx, DwarfForm.addrx, DwarfForm.loclistx,
            DwarfForm.rnglistx, DwarfForm.gnuAddrIndex, DwarfForm.gnuStrIndex:
            _ = try cursor.uleb()
        case DwarfForm.indirect: try skip(try Self.indirectForm(&cursor), &cursor)
        default: throw DwarfError("unknown form 0x\(String(form, radix: 16))")
        }
    }

    /// The form a `DW_FORM_indirect` value names; another indirection (which could nest without end) is refused.
    private static func indirectForm(_ cursor: inout DwarfCursor) throws(DwarfError) -> UInt64 {
        let form = try cursor.uleb()
        guard form != DwarfForm.indirect else { throw DwarfError("DW_FORM_indirect naming itself") }
        return form
    }

    /// Reads one value in `form`.
    func read(_ form: UInt64, implicitConstant: Int64, _ cursor: inout DwarfCursor) throws(DwarfError) -> DwarfValue {
        switch form {
        case DwarfForm.addr: return .address(try cursor.unsigned(size: addressSize))
        case DwarfForm.addrx, DwarfForm.gnuAddrIndex: return .addressIndex(try cursor.uleb())
        case DwarfForm.addrx1: return .addressIndex(UInt64(try cursor.u8()))
        case DwarfForm.addrx2: return .addressIndex(UInt64(try cursor.u16()))
        case DwarfForm.addrx3: return .addressIndex(try cursor.unsigned(size: 3))
        case DwarfForm.addrx4: return .addressIndex(UInt64(try cursor.u32()))
        case DwarfForm.data1, DwarfForm.flag: return .constant(UInt64(try cursor.u8()))
        case DwarfForm.data2: return .constant(UInt64(try cursor.u16()))
        case DwarfForm.data4: return .constant(UInt64(try cursor.u32()))
        case DwarfForm.data8: return .constant(try cursor.u64())
        case DwarfForm.udata: return .constant(try cursor.uleb())
        case DwarfForm.sdata: return .constant(UInt64(bitPattern: try cursor.sleb()))
        case DwarfForm.implicitConst: return .constant(UInt64(bitPattern: implicitConstant))
        case DwarfForm.flagPresent: return .constant(1)
        case DwarfForm.ref1: return .unitReference(UInt64(try cursor.u8()))
        case DwarfForm.ref2: return .unitReference(UInt64(try cursor.u16()))
        case DwarfForm.ref4: return .unitReference(UInt64(try cursor.u32()))
        case DwarfForm.ref8: return .unitReference(try cursor.u64())
        case DwarfForm.refUdata: return .unitReference(try cursor.uleb())
        case DwarfForm.refAddr: return .infoReference(try cursor.unsigned(size: fixedSize(of: form) ?? offsetSize))
        case DwarfForm.secOffset: return .sectionOffset(try cursor.unsigned(size: offsetSize))
        case DwarfForm.rnglistx, DwarfForm.loclistx: return .listIndex(try cursor.uleb())
        case DwarfForm.strp: return .stringOffset(try cursor.unsigned(size: offsetSize))
        case DwarfForm.lineStrp: return .lineStringOffset(try cursor.unsigned(size: offsetSize))
        case DwarfForm.strx, DwarfForm.gnuStrIndex: return .stringIndex(try cursor.uleb())
        case DwarfForm.strx1: return .stringIndex(UInt64(try cursor.u8()))
        case DwarfForm.strx2: return .stringIndex(UInt64(try cursor.u16()))
        case DwarfForm.strx3: return .stringIndex(try cursor.unsigned(size: 3))
        case DwarfForm.strx4: return .stringIndex(UInt64(try cursor.u32()))
        case DwarfForm.string:
            let start = cursor.offset
            try cursor.skipCString()
            return .inlineString(start)
        case DwarfForm.indirect:
            return try read(try Self.indirectForm(&cursor), implicitConstant: implicitConstant, &cursor)
        default:
            try skip(form, &cursor)
            return .unsupported
        }
    }
}

/// An attribute value, decoded only as far as its form says; strings and indexes are resolved on demand.
enum DwarfValue {
    case address(UInt64)
    /// An index into `.debug_addr`, from the unit's address base.
    case addressIndex(UInt64)
    case constant(UInt64)
    /// An offset from the start of the unit's header.
    case unitReference(UInt64)
    /// An offset into `.debug_info`.
    case infoReference(UInt64)
    case sectionOffset(UInt64)
    /// An index into the unit's range (or location) list offsets.
    case listIndex(UInt64)
    case stringOffset(UInt64)
    case lineStringOffset(UInt64)
    /// An index into the unit's string offsets.
    case stringIndex(UInt64)
    /// A string stored in `.debug_info` itself, at this offset.
    case inlineString(Int)
    /// A block, or a reference into another file (supplementary object files): not used here.
    case unsupported
}
