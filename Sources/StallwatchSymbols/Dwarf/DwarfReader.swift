// Names addresses from an image's own DWARF: the function, the inlined calls in it, file, line and column.
import StallwatchImages

/// Reads line tables and inlined scopes from one image's DWARF sections (2 to 5), the way `llvm-symbolizer` reports
/// them, in this process and without starting another.
///
/// Opening reads each unit's header and unit DIE, to know which code it covers; a lookup then decodes only the units
/// holding the addresses asked for: one pass over their DIEs for the inlined scopes, one run of their line programs.
/// Not thread-safe.
public final class DwarfReader {
    private let index: DwarfUnitIndex
    /// Each walked unit's line table, by the unit's offset.
    private var lineTables: [Int: DwarfLineTable] = [:]

    public init(sections: DwarfSections) throws(DwarfError) {
        index = try DwarfUnitIndex(sections: sections)
    }

    /// For each address (as linked, i.e. in the file's address space), its locations, innermost first; empty when no
    /// unit covers it. Throws when the data cannot be read (split DWARF, an unknown form, malformed sections).
    public func locations(for addresses: [UInt64]) throws(DwarfError) -> [[SymbolLocation]] {
        var result: [[SymbolLocation]] = addresses.map { _ in [] }
        var byUnit: [Int: [Int]] = [:]
        for (position, address) in addresses.enumerated() {
            if let unit = index.units.firstIndex(where: { $0.covers(address) }) {
                byUnit[unit, default: []].append(position)
            }
        }
        for (unitIndex, positions) in byUnit.sorted(by: { $0.key < $1.key }) {
            let unit = index.units[unitIndex]
            guard !unit.isSkeleton else { throw DwarfError("split DWARF (the unit's DIEs are in a .dwo file)") }
            let unitAddresses = positions.map { addresses[$0] }
            let chains = try scopeChains(in: unit, for: unitAddresses)
            let table = try lineTable(of: unit)
            let rows = try table?.rows(for: unitAddresses) ?? unitAddresses.map { _ in nil }
            for (slot, position) in positions.enumerated() {
                result[position] = try locations(chain: chains[slot], row: rows[slot], table: table)
            }
        }
        return result
    }

    /// One location per scope, innermost first: the innermost at the line table's row, each outer one at the call
    /// the scope inside it was inlined from.
    private func locations(chain: [Scope], row: DwarfLineTable.Row?, table: DwarfLineTable?) throws(DwarfError)
        -> [SymbolLocation]
    {
        let innermost = SymbolLocation(
            function: nil, file: row.flatMap { table?.path(ofFile: $0.file) }, line: Int(clamping: row?.line ?? 0),
            column: Int(clamping: row?.column ?? 0))
        guard !chain.isEmpty else { return row == nil ? [] : [innermost] }
        var locations: [SymbolLocation] = []
        var location = innermost
        for scope in chain.reversed() {
            location.function = try functionName(ofDIEAt: scope.offset)
            locations.append(location)
            location = SymbolLocation(
                function: nil, file: table?.path(ofFile: scope.callFile), line: Int(clamping: scope.callLine),
                column: Int(clamping: scope.callColumn))
        }
        return locations
    }

    private func lineTable(of unit: DwarfUnit) throws(DwarfError) -> DwarfLineTable? {
        guard let offset = unit.lineProgram else { return nil }
        // By unit, not program offset: paths are made absolute with the unit's own directory.
        if let known = lineTables[unit.offset] { return known }
        let table = try DwarfLineTable(at: offset, unit: unit, index: index)
        lineTables[unit.offset] = table
        return table
    }

    // MARK: - Scopes

    /// A function scope holding an address: a subprogram, or an inlined call (with where it was called from).
    struct Scope {
        let depth: Int
        let offset: Int
        var callFile: UInt64 = 0
        var callLine: UInt64 = 0
        var callColumn: UInt64 = 0
    }

    /// For each address, the subprogram holding it and the inlined calls nested in it down to the innermost,
    /// outermost first: one pass over the unit's DIEs.
    func scopeChains(in unit: DwarfUnit, for addresses: [UInt64]) throws(DwarfError) -> [[Scope]] {
        var chains: [[Scope]] = addresses.map { _ in [] }
        let abbreviations = try index.abbreviations(of: unit)
        var cursor = try index.sections.info.cursor(at: unit.dieOffset)
        cursor.end = unit.end
        var depth = 0
        while !cursor.atEnd {
            let offset = cursor.offset
            let code = try cursor.uleb()
            if code == 0 {
                depth -= 1
                if depth <= 0 { break }  // the unit DIE's children have ended
                continue
            }
            let abbreviation = try abbreviations.abbreviation(code)
            let tag = abbreviation.tag
            if tag == DwarfTag.subprogram || tag == DwarfTag.inlinedSubroutine || tag == DwarfTag.lexicalBlock {
                var scope = Scope(depth: depth, offset: offset)
                var low: DwarfValue?
                var high: DwarfValue?
                var ranges: DwarfValue?
                for spec in abbreviation.attributes {
                    switch spec.attribute {
                    case DwarfAttribute.lowPC, DwarfAttribute.highPC, DwarfAttribute.ranges, DwarfAttribute.callFile,
                        DwarfAttribute.callLine, DwarfAttribute.callColumn:
                        let value = try unit.format.read(spec.form, implicitConstant: spec.implicitConstant, &cursor)
                        switch spec.attribute {
                        case DwarfAttribute.lowPC: low = value
                        case DwarfAttribute.highPC: high = value
                        case DwarfAttribute.ranges: ranges = value
                        case DwarfAttribute.callFile: scope.callFile = value.number ?? 0
                        case DwarfAttribute.callLine: scope.callLine = value.number ?? 0
                        default: scope.callColumn = value.number ?? 0
                        }
                    default:
                        try unit.format.skip(spec.form, &cursor)
                    }
                }
                if low != nil || ranges != nil {
                    let covered = try index.codeRanges(low: low, high: high, ranges: ranges, in: unit)
                    for (slot, address) in addresses.enumerated()
                    where covered.contains(where: { $0.contains(address) }) {
                        // A scope nests in the deeper ones found before it only if it is deeper still.
                        chains[slot].removeAll { $0.depth >= depth }
                        // Lexical blocks only lead to the inlined calls inside them.
                        if tag != DwarfTag.lexicalBlock { chains[slot].append(scope) }
                    }
                }
            } else if let size = abbreviation.fixedSize {
                try cursor.skip(size)
            } else {
                for spec in abbreviation.attributes { try unit.format.skip(spec.form, &cursor) }
            }
            if abbreviation.hasChildren { depth += 1 }
        }
        return chains
    }

    // MARK: - Names

    /// The DIE's linkage name, else its plain name, looked for on the DIE and then on the DIEs its
    /// `DW_AT_abstract_origin` and `DW_AT_specification` lead to (as LLVM does).
    func functionName(ofDIEAt offset: Int) throws(DwarfError) -> String? {
        var linkage: String?
        var plain: String?
        var pending = [offset]
        var seen: Set<Int> = []
        while let next = pending.first, seen.count < 16 {
            pending.removeFirst()
            guard seen.insert(next).inserted, let unit = index.unit(holding: next) else { continue }
            var cursor = try index.sections.info.cursor(at: next)
            cursor.end = unit.end
            let code = try cursor.uleb()
            guard code != 0 else { continue }
            let abbreviation = try index.abbreviations(of: unit).abbreviation(code)
            for spec in abbreviation.attributes {
                switch spec.attribute {
                case DwarfAttribute.linkageName, DwarfAttribute.mipsLinkageName, DwarfAttribute.name,
                    DwarfAttribute.abstractOrigin, DwarfAttribute.specification:
                    let value = try unit.format.read(spec.form, implicitConstant: spec.implicitConstant, &cursor)
                    switch spec.attribute {
                    case DwarfAttribute.linkageName, DwarfAttribute.mipsLinkageName:
                        if linkage == nil { linkage = try index.string(value, in: unit) }
                    case DwarfAttribute.name:
                        if plain == nil { plain = try index.string(value, in: unit) }
                    default:
                        switch value {
                        case .unitReference(let relative) where relative < UInt64(unit.end - unit.offset):
                            pending.append(unit.offset + Int(relative))
                        case .infoReference(let absolute): pending.append(Int(clamping: absolute))
                        default: break  // a reference into another file
                        }
                    }
                default:
                    try unit.format.skip(spec.form, &cursor)
                }
            }
            if let linkage { return linkage }
        }
        return plain
    }
}
