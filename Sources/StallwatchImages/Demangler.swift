// Readable function names from linkage names, by the Swift runtime's own demangler.
import Runtime

/// Demangles names the way the toolchain's symbolicator shows them, whichever source found the name.
public enum Demangler {
    /// Swift names simplified (`static FrameClock.spinUntilNextFrame(until:)`), C++ names demangled, C names as
    /// they are.
    public static func readable(_ raw: String) -> String {
        SymbolicatedBacktrace.Symbol(imageIndex: 0, imageName: "", rawName: raw, offset: 0, sourceLocation: nil).name
    }
}
