// Readable function names from linkage names, by the Swift runtime's own demangler.
import Runtime

/// Demangles names the way the toolchain's symbolicator shows them, whichever source found the name.
public enum Demangler {
    /// Swift names simplified (`static FrameClock.spinUntilNextFrame(until:)`), C++ names demangled, C names as
    /// they are.
    public static func readable(_ raw: String) -> String {
        let name = SymbolicatedBacktrace.Symbol(
            imageIndex: 0, imageName: "", rawName: raw, offset: 0, sourceLocation: nil
        ).name
        // A closure in top-level code (main.swift, a script) is "closure #1 in " with nothing after the "in".
        return name.hasSuffix(" in ") ? name + "top-level code" : name
    }
}
