// Where frame names, source locations and inlined frames come from: kept symbolicators behind one small protocol.
import StallwatchCore

/// One address to name, in the image that holds it.
public struct SymbolLookup: Hashable, Sendable {
    /// The address in the watched process.
    public let address: UInt64
    /// The image's path and the address's offset from its load base (``ProcessImages/image(containing:)``).
    public let image: String
    public let offset: UInt64
    /// The interrupted instruction is named as is; a return address by the call before it.
    public let interrupted: Bool
    /// Where to read the image from here: its path, or the path through the process's root when it runs in a
    /// container (``ProcessImages/readablePath(_:)``).
    public let file: String

    public init(address: UInt64, image: String, offset: UInt64, interrupted: Bool, file: String? = nil) {
        self.address = address
        self.image = image
        self.offset = offset
        self.interrupted = interrupted
        self.file = file ?? image
    }

    /// The offset to name: the call instruction before a return address, the interrupted instruction itself.
    public var namedOffset: UInt64 { interrupted || offset == 0 ? offset : offset - 1 }

    /// The frame for this address before it is named.
    public var bareFrame: Frame { Frame(address: address, image: image, offset: offset) }

    /// Frames from what a symbolicator read about this address, innermost (inlined deepest) first; nil if they name
    /// nothing, so the next source may try.
    public func frames(from locations: [SymbolLocation]) -> [Frame]? {
        let frames = locations.enumerated().map { index, location in
            var frame = bareFrame
            if let raw = location.function, !raw.isEmpty, raw != "??" {
                // Capped before demangling (a name's cost) and after (demangling can lengthen a name many times).
                frame.symbol = SymbolName.capped(Demangler.readable(SymbolName.capped(raw)))
            }
            if let file = location.file, !file.isEmpty {
                // Compiler-generated code comes as "/<compiler-generated>", as the toolchain's reader names it.
                frame.file = file.hasPrefix("/<") ? String(file.dropFirst()) : file
                // Line 0 is DWARF's "no particular line" (compiler-generated code); its column means nothing.
                if location.line > 0 {
                    frame.line = location.line
                    frame.column = location.column > 0 ? location.column : nil
                }
            }
            frame.inlined = index < locations.count - 1
            return frame
        }
        return frames.contains { $0.symbol != nil || $0.file != nil } ? frames : nil
    }
}

/// A symbolicator: names addresses off the watched process, from the images' files.
///
/// ``Symbolicator`` asks its sources in turn; each names what it is good at and leaves the rest to the next.
public protocol SymbolSource: Sendable {
    /// A short name for diagnostics.
    var name: String { get }

    /// For each lookup, its frames (the frames inlined at that address first, the function containing it last, each
    /// with the lookup's address, image and offset), or nil to leave it to the next source.
    func frames(for lookups: [SymbolLookup], images: ProcessImages) -> [[Frame]?]
}

/// A source set up when first asked: for a fallback that costs something to find or start and is rarely needed.
public final class DeferredSource: SymbolSource {
    public let name: String
    /// Nil inside if it could not be made.
    private let source: FirstUse<(any SymbolSource)?>

    public init(name: String, make: @escaping @Sendable () -> (any SymbolSource)?) {
        self.name = name
        source = FirstUse(make)
    }

    public func frames(for lookups: [SymbolLookup], images: ProcessImages) -> [[Frame]?] {
        source.value?.frames(for: lookups, images: images) ?? lookups.map { _ in nil }
    }
}

/// What debug info (DWARF) says about one address, innermost first: the function inlined deepest and the line the
/// address is on, then each function it was inlined into and the line of that call, ending with the function that
/// holds the code.
public struct SymbolLocation: Equatable, Sendable {
    /// The function's linkage (mangled) name, or its plain name; nil when DWARF names no function there.
    public var function: String?
    public var file: String?
    /// 0: no particular line (compiler-generated code).
    public var line: Int
    public var column: Int

    public init(function: String?, file: String?, line: Int, column: Int) {
        self.function = function
        self.file = file
        self.line = line
        self.column = column
    }
}
