// Reading a target's image files in the collector: function names from ELF symbol tables, and file:line with inlined frames from DWARF.
import CStallwatchElf
import StallwatchCore
import StallwatchImages
import Synchronization

/// Names frames from the images' own files, read with elfutils' libelf, starting no other process.
///
/// - Images without DWARF (system and toolchain libraries) are named from their symbol tables: one pass over a table
///   for all of an image's addresses, no sorting. The toolchain's symbolicator sorts a whole table first (49,000
///   symbols in libFoundation.so).
/// - Images with DWARF also get file, line, column and inlined frames from ``DwarfReader``, which decodes only the
///   units holding the addresses asked for. `llvm-symbolizer` reads the same, but starting it and loading the image's
///   whole symbol table and every unit's abbreviations costs ~10 ms on a 5 MB Swift binary.
///
/// An image it cannot open, and one whose DWARF it cannot decode (split DWARF, an unknown form), are left to the next
/// source.
final class ElfImageReader: SymbolSource {
    /// Opened images by path (nil: not readable ELF), kept for the symbolicator's life.
    private let images = Mutex<[String: OpenImage?]>([:])
    /// What the reader reads.
    enum Reading {
        /// Symbol tables and DWARF.
        case symbolsAndDwarf
        /// Symbol tables of images without DWARF; images with DWARF are left to the next source.
        case symbolsOfImagesWithoutDwarf
        /// Every image's symbol table, DWARF or not: names without lines, for what no source before named.
        case symbolsOnly
    }

    private let reading: Reading

    init(reading: Reading = .symbolsAndDwarf) {
        self.reading = reading
    }

    var name: String {
        reading == .symbolsAndDwarf ? "ELF symbol tables and DWARF (libelf)" : "ELF symbol tables (libelf)"
    }

    /// Whether the image file carries its own DWARF.
    func hasDebugInfo(_ path: String) -> Bool {
        images.withLock { open(path, in: &$0).map { sw_symbols_has_debug_info($0.symbols) != 0 } ?? false }
    }

    /// The address the image's first mapping is linked at (0 for PIE executables and shared objects).
    func linkBase(_ path: String) -> UInt64 {
        images.withLock { open(path, in: &$0).map { sw_symbols_link_base($0.symbols) } ?? 0 }
    }

    func frames(for lookups: [SymbolLookup], images _: ProcessImages) -> [[Frame]?] {
        var named: [[Frame]?] = lookups.map { _ in nil }
        var byImage: [String: [Int]] = [:]
        for (index, lookup) in lookups.enumerated() { byImage[lookup.file, default: []].append(index) }
        // libelf reads lazily into the handle, and a DWARF reader caches: one caller at a time.
        images.withLock { images in
            for (path, indices) in byImage {
                guard let image = open(path, in: &images) else { continue }
                let imageLookups = indices.map { lookups[$0] }
                for (index, frames) in zip(indices, name(imageLookups, in: image)) {
                    named[index] = frames
                }
            }
        }
        return named
    }

    /// One image's lookups: symbol names for all, and DWARF's locations where it has DWARF.
    private func name(_ lookups: [SymbolLookup], in image: OpenImage) -> [[Frame]?] {
        let hasDwarf = sw_symbols_has_debug_info(image.symbols) != 0 && reading != .symbolsOnly
        if hasDwarf && reading == .symbolsOfImagesWithoutDwarf { return lookups.map { _ in nil } }
        let offsets = lookups.map(\.namedOffset)
        var rawNames = [UnsafePointer<CChar>?](repeating: nil, count: offsets.count)
        sw_symbols_name(image.symbols, offsets, offsets.count, &rawNames)
        // Read capped: a name can be any length in the file, and is read again for every frame it names.
        let symbols = rawNames.map { $0.map(SymbolName.capped(cString:)) }
        guard hasDwarf else {
            // An address no symbol covers (a stripped local function, a PLT stub) stays unnamed: the toolchain's
            // reader would read the same table whole (~10 MB for libswiftCore.so) only to guess the symbol before it.
            return zip(lookups, symbols).map { lookup, symbol in
                symbol.flatMap { lookup.frames(from: [SymbolLocation(function: $0, file: nil, line: 0, column: 0)]) }
                    ?? [lookup.bareFrame]
            }
        }
        guard let reader = image.dwarf else { return lookups.map { _ in nil } }
        let linkBase = sw_symbols_link_base(image.symbols)
        guard let found = try? reader.locations(for: offsets.map { $0 &+ linkBase }) else {
            return lookups.map { _ in nil }
        }
        return zip(lookups, zip(found, symbols)).map { lookup, answer in
            var (locations, symbol) = answer
            // As llvm-symbolizer does: the function holding the code is named by the symbol table where it has a
            // name (a compiler's clone, `foo.cold`, is named there and not in DWARF).
            if locations.isEmpty {
                locations = [SymbolLocation(function: symbol, file: nil, line: 0, column: 0)]
            } else if let symbol {
                locations[locations.count - 1].function = symbol
            }
            // DWARF was read: nothing else would name more.
            return lookup.frames(from: locations) ?? [lookup.bareFrame]
        }
    }

    private func open(_ path: String, in images: inout [String: OpenImage?]) -> OpenImage? {
        if let known = images[path] { return known }
        let opened = path.hasPrefix("/") ? sw_symbols_open(path).map { OpenImage(symbols: $0) } : nil
        images[path] = opened
        return opened
    }
}

/// An open `sw_symbols` handle and the DWARF reader over its sections; used under the images lock only.
private final class OpenImage: @unchecked Sendable {
    let symbols: OpaquePointer

    init(symbols: OpaquePointer) {
        self.symbols = symbols
    }

    deinit {
        sw_symbols_close(symbols)
    }

    /// The reader over the image's DWARF, made when first needed; nil if it cannot be read.
    private(set) lazy var dwarf: DwarfReader? = try? DwarfReader(sections: DwarfSections(of: symbols))
}

extension DwarfSections {
    /// The DWARF sections of an open image (inflated if compressed); they live until the handle is closed.
    init(of symbols: OpaquePointer) {
        self.init { name in
            var size = 0
            guard let bytes = sw_symbols_section(symbols, name, &size) else { return nil }
            return UnsafeRawBufferPointer(start: bytes, count: size)
        }
    }
}
