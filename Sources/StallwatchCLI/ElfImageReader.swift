// The cheap half of symbolication: function names from the symbol tables of images without debug info.
import CStallwatchElf
import StallwatchCore
import StallwatchSymbols
import Synchronization

/// Names frames in images that carry no DWARF (system and toolchain libraries) from their ELF symbol tables, read
/// with elfutils' libelf: one pass over the table for all of an image's addresses, no sorting, no line tables.
///
/// That is all such images offer, and it is what makes a one-shot `stallwatch stack` cheap: the toolchain's
/// symbolicator sorts a whole table first (49,000 symbols in libFoundation.so) and `llvm-symbolizer` goes looking for
/// separate debug files' line tables. Images with DWARF, and addresses no symbol covers, are left to the next source.
final class ElfSymbolTables: SymbolSource {
    /// Opened tables by image path (nil: not readable ELF), kept for the symbolicator's life.
    private let tables = Mutex<[String: OpenTable?]>([:])

    var name: String { "ELF symbol tables (libelf)" }

    deinit {
        tables.withLock { tables in
            for case let table? in tables.values { sw_symbols_close(table.pointer) }
        }
    }

    /// Whether the image file carries its own DWARF, so a DWARF reader should name its frames.
    func hasDebugInfo(_ path: String) -> Bool {
        guard let table = open(path) else { return false }
        return sw_symbols_has_debug_info(table.pointer) != 0
    }

    /// The address the image's first mapping is linked at (0 for PIE executables and shared objects).
    func linkBase(_ path: String) -> UInt64 {
        guard let table = open(path) else { return 0 }
        return sw_symbols_link_base(table.pointer)
    }

    func frames(for lookups: [SymbolLookup], images: ProcessImages) -> [[Frame]?] {
        var named: [[Frame]?] = lookups.map { _ in nil }
        var byImage: [String: [Int]] = [:]
        for (index, lookup) in lookups.enumerated() { byImage[lookup.file, default: []].append(index) }
        for (path, indices) in byImage {
            guard let table = open(path), sw_symbols_has_debug_info(table.pointer) == 0 else { continue }
            let offsets = indices.map { lookups[$0].namedOffset }
            var names = [UnsafePointer<CChar>?](repeating: nil, count: offsets.count)
            tables.withLock { _ in
                // libelf reads lazily into the handle: one caller at a time.
                sw_symbols_name(table.pointer, offsets, offsets.count, &names)
            }
            for (slot, index) in indices.enumerated() {
                guard let raw = names[slot] else { continue }
                var frame = lookups[index].bareFrame
                frame.symbol = Demangler.readable(String(cString: raw))
                named[index] = [frame]
            }
        }
        return named
    }

    private func open(_ path: String) -> OpenTable? {
        tables.withLock { tables in
            if let known = tables[path] { return known }
            let opened = path.hasPrefix("/") ? sw_symbols_open(path).map(OpenTable.init) : nil
            tables[path] = opened
            return opened
        }
    }
}

/// An open `sw_symbols` handle; used under the table lock only.
private struct OpenTable: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The symbolicator the CLI uses: symbol tables for images without debug info, `llvm-symbolizer` for those with it
/// (its DWARF reader decodes only the units it needs), the toolchain's `Runtime` module for whatever is left.
///
/// `STALLWATCH_SYMBOLIZER=runtime` uses the `Runtime` module alone; a path there picks the `llvm-symbolizer`.
public enum CLISymbolicator {
    public static func make(environment: [String: String]) -> Symbolicator {
        if environment[LLVMSymbolizer.environmentVariable] == "runtime" { return Symbolicator(parallel: true) }
        let tables = ElfSymbolTables()
        var sources: [any SymbolSource] = [tables]
        if let path = LLVMSymbolizer.locate(environment: environment) {
            sources.append(
                LLVMSymbolizer(
                    executable: path, handles: { tables.hasDebugInfo($0) }, linkBase: { tables.linkBase($0) }))
        }
        // The collector's own process: the fallback may use a thread per image.
        return Symbolicator(sources: sources, parallel: true)
    }
}
