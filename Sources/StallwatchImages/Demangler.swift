// Readable function names from linkage names, by the Swift runtime's own demangler.
import Runtime

/// Demangles names the way the toolchain's symbolicator shows them, whichever source found the name.
public enum Demangler {
    /// Swift names simplified (`static FrameClock.spinUntilNextFrame(until:)`), C++ names demangled, C names as
    /// they are. An async function's resume partial function keeps its kind, which simplifying drops
    /// (`(2) suspend resume partial function for static App.main()`, not `static App.main()`): it is another
    /// function than the async function's entry, and tools must be able to tell them apart.
    public static func readable(_ raw: String) -> String {
        let simplified =
            SymbolicatedBacktrace.Symbol(imageIndex: 0, imageName: "", rawName: raw, offset: 0, sourceLocation: nil)
            .name
        // A closure in top-level code (main.swift, a script) is "closure #1 in " with nothing after the "in".
        let named = simplified.hasSuffix(" in ") ? simplified + "top-level code" : simplified
        // Only a name the demangler read as Swift is an async function's: a C or assembly name may start `$s` and
        // end `TQ0_` too, and is shown as it is.
        guard simplified != raw, let kind = asyncPartialKind(of: raw), !named.hasPrefix(kind) else { return named }
        return kind + named
    }

    /// `(N) suspend resume partial function for ` for a name mangled `…TY<index>_`, `(N) await resume partial
    /// function for ` for `…TQ<index>_` (an index is `_` for 0, `<n>_` for n + 1), as the full demangler says it.
    static func asyncPartialKind(of raw: String) -> String? {
        guard raw.hasPrefix("$s") || raw.hasPrefix("_$s") || raw.hasPrefix("$S"), raw.hasSuffix("_") else {
            return nil
        }
        let body = raw.dropLast()
        let digits = body.reversed().prefix { $0.isASCII && $0.isNumber }
        let head = body.dropLast(digits.count)
        let kind: String
        if head.hasSuffix("TY") {
            kind = "suspend resume partial function for "
        } else if head.hasSuffix("TQ") {
            kind = "await resume partial function for "
        } else {
            return nil
        }
        let index = digits.isEmpty ? 0 : (Int(String(digits.reversed())) ?? 0) + 1
        return "(\(index)) \(kind)"
    }
}
