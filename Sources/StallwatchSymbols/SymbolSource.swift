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
