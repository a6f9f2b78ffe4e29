// The chain of symbol sources the collector names frames with, in the order each is good at them.
import StallwatchImages

/// The symbolicator the collector uses: symbol tables and DWARF read in process by readers that throw on damage,
/// `llvm-symbolizer` (a helper process, which may die) for DWARF the built-in reader cannot decode, then the symbol
/// tables alone (names without lines) for what neither named. The toolchain's `Runtime` module never reads a
/// target's files here: it traps on hostile DWARF. A frame none of them can name keeps its image and offset.
///
/// A path in `STALLWATCH_SYMBOLIZER` names an `llvm-symbolizer` to read all DWARF instead of the reader built in.
public enum CollectorSymbolicator {
    public static func make(environment: [String: String]) -> Symbolicator {
        let choice = environment[LLVMSymbolizer.environmentVariable] ?? ""
        // `runtime` chose the toolchain's Runtime module alone, which the collector no longer runs: the default.
        let reader = ElfImageReader(
            reading: choice.isEmpty || choice == "runtime" ? .symbolsAndDwarf : .symbolsOfImagesWithoutDwarf)
        // Found only if an image needs it: looking for it costs a symbol lookup and a few file checks.
        let fallback = DeferredSource(name: "llvm-symbolizer") {
            LLVMSymbolizer.locate(environment: environment).map {
                LLVMSymbolizer(executable: $0, handles: { reader.hasDebugInfo($0) }, linkBase: { reader.linkBase($0) })
            }
        }
        let namesOnly = ElfImageReader(reading: .symbolsOnly)
        return Symbolicator(sources: [reader, fallback, namesOnly], namesWithRuntimeModule: false)
    }
}
