// Turns captured addresses into frames with images, demangled names and source locations.
import CStallwatchSystem
import StallwatchCore
import Synchronization

/// Names the frames of captured stacks, off the watched process.
///
/// Kept symbolicators do the reading (``SymbolSource``), asked in turn, each naming what it is good at: the caller's
/// (the CLI puts a symbol-table reader and `llvm-symbolizer` first), then the toolchain's `Runtime` module, which names
/// everything it can. The vDSO, which has no file, is named from this process's identical vDSO.
///
/// Results are cached per image and offset: the samples of one stall, and the stalls of one run, mostly
/// share their frames, and only frames never seen before go to the symbolicators. The first stack costs
/// milliseconds (reading the images' tables); later ones cost a dictionary lookup per frame.
public final class Symbolicator: Sendable {
    /// A frame's identity independent of where its image is loaded: the same key names the same code in
    /// another sample, another stall or another process of the same binary.
    struct Key: Hashable {
        /// The file read (a container's image is another file than the same path here).
        let image: String
        let offset: UInt64
        /// The interrupted instruction is looked up as is; return addresses at the call before them.
        let interrupted: Bool
    }

    private let cache = Mutex<[Key: [Frame]]>([:])
    private let sources: [any SymbolSource]
    /// The address an image file is linked at (0 for PIE executables and shared objects), added to reported
    /// offsets so that a non-PIE executable's are what `addr2line -e IMAGE` takes; nil where unknown.
    private let linkBase: (@Sendable (String) -> UInt64)?

    /// - Parameters:
    ///   - sources: asked first, in order; the toolchain's `Runtime` module names what they leave.
    ///   - parallel: whether the `Runtime` module may name images on several threads at once (worker threads of the
    ///     calling process: right for the CLI, not inside a watched app).
    ///   - namesWithRuntimeModule: ask the toolchain's `Runtime` module last. Only where the images are this
    ///     process's own (the agent): its readers can trap on hostile files, which would kill the collector.
    ///   - linkBase: the address an image file (as read) is linked at, for the offsets frames report.
    public init(
        sources: [any SymbolSource] = [], parallel: Bool = false, namesWithRuntimeModule: Bool = true,
        linkBase: (@Sendable (String) -> UInt64)? = nil
    ) {
        self.sources = sources + (namesWithRuntimeModule ? [ToolchainSymbols(parallel: parallel)] : [])
        self.linkBase = linkBase
    }

    /// What names the frames, for diagnostics.
    public var sourceNames: [String] { sources.map(\.name) }

    /// - Parameters:
    ///   - captured: frame 0 is the interrupted program counter, the rest are return addresses.
    ///   - images: the process's images, captured while it was alive.
    /// - Returns: one frame per address, plus one per inlined call at that address (marked `inlined`).
    public func symbolicate(_ captured: [UInt64], images: ProcessImages) -> [Frame] {
        symbolicate(stacks: [captured], images: images)[0]
    }

    /// Several stacks at once (all threads of a process): each distinct frame is named once, in one batch.
    public func symbolicate(stacks: [[UInt64]], images: ProcessImages) -> [[Frame]] {
        symbolicate(stacks: stacks, images: images, namedAsIs: { $0 == 0 })
    }

    /// Addresses that are not return addresses but function entries (the resume functions of async callers), each
    /// named as is; a frame's `async` is left to the caller.
    public func symbolicate(resumePoints: [UInt64], images: ProcessImages) -> [Frame] {
        symbolicate(stacks: [resumePoints], images: images, namedAsIs: { _ in true })[0]
    }

    /// - Parameter namedAsIs: whether the address at an index of its stack is looked up as is, else at the call
    ///   before it.
    private func symbolicate(stacks: [[UInt64]], images: ProcessImages, namedAsIs: (Int) -> Bool) -> [[Frame]] {
        // Unwinders may end a walk with a zero return address (the outermost frame's): not a frame.
        let stacks = stacks.map { stack in
            var addresses = stack
            while addresses.last == 0 { addresses.removeLast() }
            return addresses
        }
        // Each address's image, found once (a container's image path costs a file-system check).
        let lookups = stacks.map { stack in
            stack.enumerated().map { index, address in lookup(address, interrupted: namedAsIs(index), images: images) }
        }
        var named: [SymbolLookup: [Frame]] = [:]
        var missing: [SymbolLookup] = []
        var pending: Set<SymbolLookup> = []
        cache.withLock { cache in
            for stack in lookups {
                for case let lookup? in stack where named[lookup] == nil && !pending.contains(lookup) {
                    if lookup.image == "[vdso]" {
                        named[lookup] = [vdsoFrame(lookup, images: images)]
                    } else if let frames = cache[key(lookup)] {
                        named[lookup] = frames.map { relocated($0, to: lookup.address) }
                    } else {
                        missing.append(lookup)
                        pending.insert(lookup)
                    }
                }
            }
        }
        if !missing.isEmpty {
            let fresh = name(missing, images: images)
            cache.withLock { cache in
                for (lookup, frames) in zip(missing, fresh) {
                    named[lookup] = frames
                    cache[key(lookup)] = frames
                }
            }
        }
        return zip(stacks, lookups).map { stack, stackLookups in
            zip(stack, stackLookups).flatMap { address, lookup in
                guard let lookup, let frames = named[lookup] else { return [Frame(address: address)] }
                return reportingLinkedOffsets(frames, of: lookup)
            }
        }
    }

    /// Each lookup's frames from the first source that names it.
    private func name(_ lookups: [SymbolLookup], images: ProcessImages) -> [[Frame]] {
        var named: [[Frame]?] = lookups.map { _ in nil }
        var left = Array(lookups.indices)
        for source in sources where !left.isEmpty {
            let answers = source.frames(for: left.map { lookups[$0] }, images: images)
            for (index, answer) in zip(left, answers) { named[index] = answer }
            left = left.filter { named[$0] == nil }
        }
        return zip(lookups, named).map { lookup, frames in frames ?? [lookup.bareFrame] }
    }

    private func lookup(_ address: UInt64, interrupted: Bool, images: ProcessImages) -> SymbolLookup? {
        guard let image = images.image(containing: address) else { return nil }
        return SymbolLookup(
            address: address, image: image.path, offset: image.offset, interrupted: interrupted,
            file: images.readablePath(image.path))
    }

    private func key(_ lookup: SymbolLookup) -> Key {
        Key(image: lookup.file, offset: lookup.offset, interrupted: lookup.interrupted)
    }

    /// `offset` as `addr2line -e IMAGE` takes it: from the load base plus the address the file is linked at, which
    /// is 0 except for an executable linked at a fixed address (non-PIE, e.g. 0x400000).
    private func reportingLinkedOffsets(_ frames: [Frame], of lookup: SymbolLookup) -> [Frame] {
        guard let linkBase, lookup.image != "[vdso]" else { return frames }
        let base = linkBase(lookup.file)
        guard base != 0 else { return frames }
        return frames.map { frame in
            var linked = frame
            linked.offset = frame.offset.map { $0 &+ base }
            return linked
        }
    }

    /// The same frames at another load address (another process, or the same code mapped elsewhere).
    private func relocated(_ frame: Frame, to address: UInt64) -> Frame {
        var moved = frame
        moved.address = address
        return moved
    }

    /// A vDSO frame, named from this process's identical vDSO: the call site for every frame but the interrupted one.
    private func vdsoFrame(_ lookup: SymbolLookup, images: ProcessImages) -> Frame {
        var frame = lookup.bareFrame
        let offset = lookup.namedOffset
        if let vdso = images.vdso, UInt64(sw_vdso_size()) <= UInt64(vdso.count) + 4096 {
            frame.symbol = sw_vdso_symbol(UInt(offset)).map { String(cString: $0) }
        }
        return frame
    }
}
