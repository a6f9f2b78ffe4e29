// How long a function name from a watched program's files may be: every symbol source's names are cut to it.

/// The one limit on a symbol name's length, and how a cut name looks.
///
/// Symbol tables, DWARF and `llvm-symbolizer` hand over names of any length: a 1 MiB name in an ELF symbol table made
/// `stack` print 1.15 MB and `run --format json` write 13.8 MB for two stalls. The longest names real programs have
/// are C++ template and Swift generic-specialization names: 1,381 bytes in libswiftCore.so and in a statically linked
/// stallwatch, a few hundred in Foundation. 4 KiB keeps three times that, and bounds a frame's record.
public enum SymbolName {
    /// The longest name kept, in UTF-8 bytes; a longer one keeps this much and ends in ``truncationMark``.
    public static let longest = 4096
    /// What ends a cut name, so that it is seen to be one.
    public static let truncationMark = "…"

    /// `name`, cut at a character boundary to ``longest`` bytes and marked, if longer.
    public static func capped(_ name: String) -> String {
        guard name.utf8.count > longest else { return name }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in name.unicodeScalars {
            bytes += UTF8.width(scalar)
            if bytes > longest { break }
            kept.append(scalar)
        }
        return String(kept) + truncationMark
    }

    /// The NUL-terminated name at `pointer`, reading no further than one byte past ``longest``.
    public static func capped(cString pointer: UnsafePointer<CChar>) -> String {
        var length = 0
        while length <= longest, pointer[length] != 0 { length += 1 }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        return capped(String(decoding: bytes, as: UTF8.self))
    }
}
