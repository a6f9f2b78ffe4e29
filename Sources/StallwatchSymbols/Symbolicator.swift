// Turns captured addresses into frames with images, demangled names and source locations.
import CStallwatchSystem
@_spi(Internal) import Runtime
import StallwatchCore

/// Names the frames of a captured stack, off the watched process.
///
/// Uses the toolchain's own symbolicator (`Runtime.Backtrace.symbolicated`, SPI pinned to this toolchain):
/// it reads ELF symbol tables and DWARF line tables, demangles Swift names and expands inlined frames.
/// It caches what it has read per image, so the first stall of a run costs milliseconds and later ones a
/// fraction of one.
public struct Symbolicator: Sendable {
    public init() {}

    /// - Parameters:
    ///   - addresses: frame 0 is the interrupted program counter, the rest are return addresses.
    ///   - images: the process's images, captured while it was alive.
    /// - Returns: one frame per address, plus one per inlined call at that address (marked `inlined`).
    public func symbolicate(_ captured: [UInt64], images: ProcessImages) -> [Frame] {
        // Unwinders may end a walk with a zero return address (the outermost frame's): not a frame.
        var addresses = captured
        while addresses.last == 0 { addresses.removeLast() }
        let richFrames: [RichFrame<UInt64>] = addresses.enumerated().map { index, address in
            index == 0 ? .programCounter(address) : .returnAddress(address)
        }
        let backtrace = Backtrace(architecture: "x86_64", frames: richFrames, images: images.map)
        guard let symbolicated = backtrace.symbolicated(with: images.map) else {
            return addresses.map { bare($0, images: images) }
        }
        var frames: [Frame] = []
        for frame in symbolicated.frames {
            let address = UInt64(frame.captured.originalProgramCounter) ?? 0
            // The symbolicator marks the end of a walk (or omitted frames) with an address-less frame.
            guard address != 0 else { continue }
            var result = bare(address, images: images)
            if result.image == "[vdso]", let offset = result.offset {
                // Look up the call site, not the return address, for every frame but the interrupted one.
                let isInterrupted = frames.isEmpty && address == addresses.first
                result.symbol = vdsoSymbol(at: isInterrupted || offset == 0 ? offset : offset - 1, images: images)
                frames.append(result)
                continue
            }
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
            frames.append(result)
        }
        return frames
    }

    /// The vDSO function at `offset`, named from this process's identical vDSO.
    private func vdsoSymbol(at offset: UInt64, images: ProcessImages) -> String? {
        guard let vdso = images.vdso, UInt64(sw_vdso_size()) <= UInt64(vdso.count) + 4096 else { return nil }
        return sw_vdso_symbol(UInt(offset)).map { String(cString: $0) }
    }

    /// A frame with its image and offset but no name.
    private func bare(_ address: UInt64, images: ProcessImages) -> Frame {
        let image = images.image(containing: address)
        return Frame(address: address, image: image?.path, offset: image?.offset)
    }
}
