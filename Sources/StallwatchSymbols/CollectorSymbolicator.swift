// The chain of symbol sources the collector names frames with, in the order each is good at them.
import StallwatchImages

/// The symbolicator the collector uses: symbol tables and DWARF read in process, `llvm-symbolizer` for DWARF that reader
/// cannot decode, the toolchain's `Runtime` module for whatever is left.
///
/// `STALLWATCH_SYMBOLIZER=runtime` uses the `Runtime` module alone; a path there names an `llvm-symbolizer` to read
/// all DWARF instead of the reader built in.
public enum CollectorSymbolicator {
    public static func make(environment: [String: String]) -> Symbolicator {
        let choice = environment[LLVMSymbolizer.environmentVariable] ?? ""
        let reader = ElfImageReader(readsDwarf: choice.isEmpty)
        if choice == "runtime" { return Symbolicator(parallel: true, linkBase: { reader.linkBase($0) }) }
        // Found only if an image needs it: looking for it costs a symbol lookup and a few file checks.
        let fallback = DeferredSource(name: "llvm-symbolizer") {
            LLVMSymbolizer.locate(environment: environment).map {
                LLVMSymbolizer(executable: $0, handles: { reader.hasDebugInfo($0) }, linkBase: { reader.linkBase($0) })
            }
        }
        // The collector's own process: the fallback may use a thread per image.
        return Symbolicator(sources: [reader, fallback], parallel: true, linkBase: { reader.linkBase($0) })
    }
}
