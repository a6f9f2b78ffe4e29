// Turns captured addresses into frames with images, demangled names and source locations.
import CStallwatchSystem
@_spi(Internal) import Runtime
import StallwatchCore
import Synchronization

/// Names the frames of a captured stack, off the watched process.
///
/// Uses the toolchain's own symbolicator (`Runtime.Backtrace.symbolicated`, SPI pinned to this toolchain):
/// it reads ELF symbol tables and DWARF line tables, demangles Swift names and expands inlined frames.
///
/// Results are cached per image and offset: the samples of one stall, and the stalls of one run, mostly
/// share their frames, and only frames never seen before go to the toolchain's symbolicator. The first stack
/// of a run costs milliseconds (reading the images' tables); later ones cost a dictionary lookup per frame.
public final class Symbolicator: Sendable {
    /// A frame's identity independent of where its image is loaded: the same key names the same code in
    /// another sample, another stall or another process of the same binary.
    struct Key: Hashable {
        let image: String
        let offset: UInt64
        /// The interrupted instruction is looked up as is; return addresses at the call before them.
        let interrupted: Bool
    }

    private let cache = Mutex<[Key: [Frame]]>([:])

    public init() {}

    /// - Parameters:
    ///   - captured: frame 0 is the interrupted program counter, the rest are return addresses.
    ///   - images: the process's images, captured while it was alive.
    /// - Returns: one frame per address, plus one per inlined call at that address (marked `inlined`).
    public func symbolicate(_ captured: [UInt64], images: ProcessImages) -> [Frame] {
        // Unwinders may end a walk with a zero return address (the outermost frame's): not a frame.
        var addresses = captured
        while addresses.last == 0 { addresses.removeLast() }
        var resolved: [[Frame]?] = addresses.map { _ in nil }
        var missing: [Int] = []
        let keys = addresses.enumerated().map { index, address in key(for: address, at: index, images: images) }
        cache.withLock { cache in
            for (index, address) in addresses.enumerated() {
                if let key = keys[index], let frames = cache[key] {
                    resolved[index] = frames.map { relocated($0, to: address) }
                } else {
                    missing.append(index)
                }
            }
        }
        if !missing.isEmpty {
            let fresh = lookUp(missing.map { (addresses[$0], $0 == 0) }, images: images)
            cache.withLock { cache in
                for (slot, index) in missing.enumerated() {
                    resolved[index] = fresh[slot]
                    if let key = keys[index] { cache[key] = fresh[slot] }
                }
            }
        }
        return resolved.flatMap { $0 ?? [] }
    }

    private func key(for address: UInt64, at index: Int, images: ProcessImages) -> Key? {
        guard let image = images.image(containing: address) else { return nil }
        return Key(image: image.path, offset: image.offset, interrupted: index == 0)
    }

    /// The same frames at another load address (another process, or the same code mapped elsewhere).
    private func relocated(_ frame: Frame, to address: UInt64) -> Frame {
        var moved = frame
        moved.address = address
        return moved
    }

    /// Symbolicates addresses with the toolchain: for each, its frames, inlined ones first.
    private func lookUp(_ entries: [(address: UInt64, interrupted: Bool)], images: ProcessImages) -> [[Frame]] {
        var groups: [[Frame]] = entries.map { [bare($0.address, images: images)] }
        let richFrames: [RichFrame<UInt64>] = entries.map { entry in
            entry.interrupted ? .programCounter(entry.address) : .returnAddress(entry.address)
        }
        let backtrace = Backtrace(architecture: "x86_64", frames: richFrames, images: images.map)
        guard let symbolicated = backtrace.symbolicated(with: images.map) else { return groups }
        // The symbolicator emits, per captured address, its inlined frames and then the real one.
        var slot = 0
        var group: [Frame] = []
        for frame in symbolicated.frames {
            let address = UInt64(frame.captured.originalProgramCounter) ?? 0
            // Omitted and truncated markers carry no address: not frames.
            guard address != 0, slot < entries.count else { continue }
            group.append(describe(frame, address: address, interrupted: entries[slot].interrupted, images: images))
            if !frame.inlined {
                groups[slot] = group
                group = []
                slot += 1
            }
        }
        return groups
    }

    private func describe(
        _ frame: SymbolicatedBacktrace.Frame, address: UInt64, interrupted: Bool, images: ProcessImages
    ) -> Frame {
        var result = bare(address, images: images)
        if result.image == "[vdso]", let offset = result.offset {
            // Look up the call site, not the return address, for every frame but the interrupted one.
            result.symbol = vdsoSymbol(at: interrupted || offset == 0 ? offset : offset - 1, images: images)
            return result
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
        return result
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
