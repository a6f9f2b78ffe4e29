// Line programs (.debug_line): which file, line and column each instruction address comes from.

/// One unit's line table: its file names, and the rows its program produces on demand.
struct DwarfLineTable {
    /// A row of the table: the source position of the instructions from `address` up to the next row's.
    struct Row {
        var address: UInt64 = 0
        var file: UInt64 = 1
        var line: UInt64 = 1
        var column: UInt64 = 0
    }

    private struct FileEntry {
        let name: String
        let directory: UInt64
    }

    private let version: Int
    private let compilationDirectory: String
    private var directories: [String] = []
    private var files: [FileEntry] = []
    private let format: DwarfFormat
    private let sections: DwarfSections
    // The program: its bytes and the header fields that decode it.
    private let programStart: Int
    private let programEnd: Int
    private let minimumInstructionLength: UInt64
    private let lineBase: Int64
    private let lineRange: UInt64
    private let opcodeBase: UInt8
    private let standardOpcodeLengths: [UInt8]

    /// Parses the header of the program at `offset` of `.debug_line` for a unit with this format and directory.
    init(at offset: UInt64, unit: DwarfUnit, index: DwarfUnitIndex) throws(DwarfError) {
        let sections = index.sections
        self.sections = sections
        compilationDirectory =
            try unit.compilationDirectory.flatMap { value throws(DwarfError) in
                try index.string(value, in: unit)
            } ?? ""
        var cursor = try sections.line.cursor(at: Int(clamping: offset))
        let (length, offsetSize) = try cursor.unitLength()
        programEnd = try cursor.end(after: length)
        cursor.end = programEnd
        version = Int(try cursor.u16())
        guard (2...5).contains(version) else { throw DwarfError("line table version \(version)") }
        var addressSize = unit.format.addressSize
        if version >= 5 {
            addressSize = Int(try cursor.u8())
            _ = try cursor.u8()  // segment selector size
        }
        format = DwarfFormat(version: unit.format.version, offsetSize: offsetSize, addressSize: addressSize)
        let headerLength = try cursor.unsigned(size: offsetSize)
        programStart = try cursor.end(after: headerLength)
        minimumInstructionLength = UInt64(try cursor.u8())
        if version >= 4 { _ = try cursor.u8() }  // maximum operations per instruction (VLIW only)
        _ = try cursor.u8()  // default is_stmt
        lineBase = Int64(Int8(bitPattern: try cursor.u8()))
        lineRange = UInt64(try cursor.u8())
        guard lineRange != 0 else { throw DwarfError("line range 0") }
        opcodeBase = try cursor.u8()
        var lengths: [UInt8] = []
        for _ in 1..<max(1, Int(opcodeBase)) { lengths.append(try cursor.u8()) }
        standardOpcodeLengths = lengths
        if version >= 5 {
            try readEntriesV5(&cursor, unit: unit)
        } else {
            try readEntriesV4(&cursor)
        }
    }

    /// DWARF 2-4: NUL-terminated lists of directory names and of (name, directory, time, size) file entries.
    private mutating func readEntriesV4(_ cursor: inout DwarfCursor) throws(DwarfError) {
        while true {
            let directory = try cursor.cString()
            if directory.isEmpty { break }
            directories.append(directory)
        }
        while true {
            let name = try cursor.cString()
            if name.isEmpty { break }
            let directory = try cursor.uleb()
            _ = try cursor.uleb()
            _ = try cursor.uleb()
            files.append(FileEntry(name: name, directory: directory))
        }
    }

    /// DWARF 5: self-describing entry formats, then the directories and the files in them.
    private mutating func readEntriesV5(_ cursor: inout DwarfCursor, unit: DwarfUnit) throws(DwarfError) {
        func readEntries(_ cursor: inout DwarfCursor) throws(DwarfError) -> [(path: String, directory: UInt64)] {
            let formatCount = Int(try cursor.u8())
            var formats: [(content: UInt64, form: UInt64)] = []
            for _ in 0..<formatCount { formats.append((try cursor.uleb(), try cursor.uleb())) }
            let count = try cursor.uleb()
            // Every entry takes at least a byte unless it has no fields at all, which no producer writes.
            guard !formats.isEmpty || count == 0, count <= UInt64(cursor.end - cursor.offset) else {
                throw DwarfError("\(count) line table entries of \(formats.count) fields")
            }
            var entries: [(path: String, directory: UInt64)] = []
            for _ in 0..<count {
                var path = ""
                var directory: UInt64 = 0
                for (content, form) in formats {
                    switch content {
                    case 1:  // DW_LNCT_path
                        let value = try format.read(form, implicitConstant: 0, &cursor)
                        switch value {
                        case .stringOffset(let offset): path = try sections.str.string(at: offset)
                        case .lineStringOffset(let offset): path = try sections.lineStr.string(at: offset)
                        case .inlineString(let offset): path = try sections.line.string(at: UInt64(offset))
                        default: throw DwarfError("line table path in form 0x\(String(form, radix: 16))")
                        }
                    case 2:  // DW_LNCT_directory_index
                        directory = try format.read(form, implicitConstant: 0, &cursor).number ?? 0
                    default:
                        try format.skip(form, &cursor)
                    }
                }
                entries.append((path, directory))
            }
            return entries
        }
        directories = try readEntries(&cursor).map(\.path)
        files = try readEntries(&cursor).map { FileEntry(name: $0.path, directory: $0.directory) }
    }

    /// The path of file `index` as `llvm-symbolizer` prints it: made absolute with the include directory and, unless
    /// that is already absolute, the unit's compilation directory.
    func path(ofFile index: UInt64) -> String? {
        let entry: FileEntry
        if version >= 5 {
            guard index < UInt64(files.count) else { return nil }
            entry = files[Int(index)]
        } else {
            guard index >= 1, index <= UInt64(files.count) else { return nil }
            entry = files[Int(index) - 1]
        }
        if entry.name.hasPrefix("/") { return entry.name }
        var directory = ""
        if version >= 5 {
            if entry.directory < UInt64(directories.count) { directory = directories[Int(entry.directory)] }
        } else if entry.directory >= 1, entry.directory <= UInt64(directories.count) {
            directory = directories[Int(entry.directory) - 1]
        }
        var path = ""
        // DWARF 5's directory 0 is the compilation directory itself.
        if (version < 5 || entry.directory != 0) && !directory.hasPrefix("/") {
            Self.append(compilationDirectory, to: &path)
        }
        Self.append(directory, to: &path)
        Self.append(entry.name, to: &path)
        return path
    }

    /// Joins path components with one `/` between them, as LLVM's `sys::path::append` does.
    private static func append(_ component: String, to path: inout String) {
        guard !component.isEmpty else { return }
        if path.hasSuffix("/") {
            path += component.drop { $0 == "/" }
        } else {
            if !path.isEmpty && !component.hasPrefix("/") { path += "/" }
            path += component
        }
    }

    /// Runs the program once and returns, for each address, the row covering it: the last row at or below it within a
    /// sequence that continues past it. Nil where no sequence covers an address.
    func rows(for addresses: [UInt64]) throws(DwarfError) -> [Row?] {
        var found: [Row?] = addresses.map { _ in nil }
        var remaining = addresses.count
        var cursor = try sections.line.cursor(at: programStart)
        cursor.end = programEnd
        var row = Row()
        var previous: Row?

        func emit(_ row: Row) {
            if let previous, previous.address < row.address {
                for (index, address) in addresses.enumerated()
                where found[index] == nil && previous.address <= address && address < row.address {
                    found[index] = previous
                    remaining -= 1
                }
            }
            previous = row
        }

        while !cursor.atEnd && remaining > 0 {
            let opcode = try cursor.u8()
            if opcode >= opcodeBase {
                let adjusted = UInt64(opcode - opcodeBase)
                row.address &+= (adjusted / lineRange) &* minimumInstructionLength
                row.line = UInt64(bitPattern: Int64(bitPattern: row.line) &+ lineBase &+ Int64(adjusted % lineRange))
                emit(row)
                continue
            }
            switch opcode {
            case 0:  // extended
                let length = try cursor.uleb()
                guard length > 0 else { continue }
                let next = try cursor.end(after: length)
                let extended = try cursor.u8()
                switch extended {
                case 1:  // DW_LNE_end_sequence
                    emit(row)
                    row = Row()
                    previous = nil
                case 2:  // DW_LNE_set_address
                    row.address = try cursor.unsigned(size: next - cursor.offset)
                default: break  // define_file, set_discriminator, vendor: nothing a lookup needs
                }
                cursor.offset = next
            case 1: emit(row)  // DW_LNS_copy
            case 2: row.address &+= (try cursor.uleb()) &* minimumInstructionLength  // advance_pc
            case 3: row.line = UInt64(bitPattern: Int64(bitPattern: row.line) &+ (try cursor.sleb()))  // advance_line
            case 4: row.file = try cursor.uleb()  // set_file
            case 5: row.column = try cursor.uleb()  // set_column
            case 8:  // const_add_pc
                row.address &+= (UInt64(255 - opcodeBase) / lineRange) &* minimumInstructionLength
            case 9: row.address &+= UInt64(try cursor.u16())  // fixed_advance_pc
            default:  // negate_stmt, basic_block, prologue_end, epilogue_begin, set_isa, or unknown: skip operands
                let operands =
                    Int(opcode) - 1 < standardOpcodeLengths.count ? standardOpcodeLengths[Int(opcode) - 1] : 0
                for _ in 0..<operands { _ = try cursor.uleb() }
            }
        }
        return found
    }
}
