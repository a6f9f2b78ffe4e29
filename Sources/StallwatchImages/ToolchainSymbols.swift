// The Swift toolchain's own symbolicator (the `Runtime` module), in-process: no helper program needed.
import Dispatch
@_spi(Internal) import Runtime
import StallwatchCore

/// Names frames with `Runtime.Backtrace.symbolicated` (SPI pinned to this toolchain): ELF symbol tables, DWARF line
/// tables, demangled Swift names, inlined frames.
///
/// It needs nothing but the Swift runtime, so the agent uses it in-process and the collector falls back to it when
/// `llvm-symbolizer` is missing. Its first lookup in an image reads all of that image's tables (it sorts the whole
/// symbol table and walks every DWARF unit for inlined call sites), which grows with the size of the debug info;
/// images are therefore named in parallel, one image per thread, its per-thread image cache never shared.
public struct ToolchainSymbols: SymbolSource {
    /// Whether images are named on several threads at once.
    let parallel: Bool

    public init(parallel: Bool = false) {
        self.parallel = parallel
    }

    public var name: String { "the toolchain's Runtime module" }

    public func frames(for lookups: [SymbolLookup], images: ProcessImages) -> [[Frame]?] {
        var byImage: [String: [Int]] = [:]
        for (index, lookup) in lookups.enumerated() { byImage[lookup.image, default: []].append(index) }
        let groups = Array(byImage.values)
        let results = ResultSlots<[[Frame]]>(count: groups.count)
        if parallel {
            DispatchQueue.concurrentPerform(iterations: groups.count) { group in
                results[group] = Self.name(groups[group].map { lookups[$0] }, images: images)
            }
        } else {
            for group in groups.indices {
                results[group] = Self.name(groups[group].map { lookups[$0] }, images: images)
            }
        }
        var named: [[Frame]] = lookups.map { [$0.bareFrame] }
        for (group, indices) in groups.enumerated() {
            for (slot, index) in indices.enumerated() { named[index] = results[group]?[slot] ?? named[index] }
        }
        return named
    }

    /// One image's lookups on the calling thread: program counters one call each (the symbolicator treats only a
    /// backtrace's first frame as one), return addresses in one call.
    private static func name(_ lookups: [SymbolLookup], images: ProcessImages) -> [[Frame]] {
        var named: [[Frame]] = lookups.map { [$0.bareFrame] }
        var returns: [Int] = []
        for (index, lookup) in lookups.enumerated() {
            if lookup.interrupted {
                named[index] = symbolicate([lookup], images: images)?.first ?? named[index]
            } else {
                returns.append(index)
            }
        }
        guard let first = returns.first else { return named }
        // The first return address goes in twice, first as the program counter the symbolicator expects and whose
        // frames are dropped: a zero there would be read as the end of the stack.
        let batch = [lookups[first]] + returns.map { lookups[$0] }
        var kinds = batch.map(\.interrupted)
        kinds[0] = true
        guard let groups = symbolicate(batch, asProgramCounter: kinds, images: images) else {
            // Not one concrete frame per address: name them one by one instead, each as the program counter's
            // return address (the address given twice, the first copy's frames dropped).
            for index in returns {
                let pair = [lookups[index], lookups[index]]
                named[index] = symbolicate(pair, asProgramCounter: [true, false], images: images)?.last ?? named[index]
            }
            return named
        }
        for (slot, index) in returns.enumerated() { named[index] = groups[slot + 1] }
        return named
    }

    /// Symbolicates one backtrace: for each entry, its inlined frames and then the function containing it; nil if
    /// the symbolicator did not return one concrete frame per entry (the frames could not be matched to addresses).
    private static func symbolicate(
        _ entries: [SymbolLookup], asProgramCounter kinds: [Bool]? = nil, images: ProcessImages
    ) -> [[Frame]]? {
        let kinds = kinds ?? entries.map(\.interrupted)
        var groups: [[Frame]] = entries.map { [$0.bareFrame] }
        let richFrames: [RichFrame<UInt64>] = zip(entries, kinds).map { entry, isProgramCounter in
            isProgramCounter ? .programCounter(entry.address) : .returnAddress(entry.address)
        }
        guard let map = images.map else { return nil }
        let backtrace = Backtrace(architecture: "x86_64", frames: richFrames, images: map)
        guard let symbolicated = backtrace.symbolicated(with: map) else { return nil }
        // The symbolicator emits, per captured address, its inlined frames and then the real one.
        var slot = 0
        var group: [Frame] = []
        for frame in symbolicated.frames {
            // Omitted and truncated markers carry no address: not frames.
            guard UInt64(frame.captured.originalProgramCounter) ?? 0 != 0, slot < entries.count else { continue }
            group.append(describe(frame, entries[slot]))
            if !frame.inlined {
                groups[slot] = group
                group = []
                slot += 1
            }
        }
        return slot == entries.count ? groups : nil
    }

    private static func describe(_ frame: SymbolicatedBacktrace.Frame, _ lookup: SymbolLookup) -> Frame {
        var result = lookup.bareFrame
        if let symbol = frame.symbol {
            result.symbol = symbol.name
            if let location = symbol.sourceLocation, !location.path.isEmpty {
                result.file = location.path
                // Line 0 is DWARF's "no particular line" (compiler-generated code); its column means nothing.
                if location.line > 0 {
                    result.line = location.line
                    result.column = location.column > 0 ? location.column : nil
                }
            }
        }
        result.inlined = frame.inlined
        return result
    }
}

/// Slots written by concurrent workers, each slot by one worker, read after they all finished.
///
/// Raw memory rather than an array: concurrent writes to different elements of one array would be overlapping
/// accesses to the array as a whole.
private final class ResultSlots<Value>: @unchecked Sendable {
    private let values: UnsafeMutablePointer<Value?>
    private let count: Int

    init(count: Int) {
        self.count = count
        values = .allocate(capacity: max(1, count))
        values.initialize(repeating: nil, count: max(1, count))
    }

    deinit {
        values.deinitialize(count: max(1, count))
        values.deallocate()
    }

    subscript(index: Int) -> Value? {
        get { values[index] }
        set { values[index] = newValue }
    }
}
