// `--rotate SIZE[,KEEP]`: when the `--output` file is rotated, and what is renamed to what. Pure; the renames and
// writes are RotatingFile's.

/// Rotation of the report file by size: `FILE` → `FILE.1` → `FILE.2` …, at most ``keep`` rotated files.
public struct OutputRotation: Equatable, Sendable {
    /// A record that would take the file past this many bytes goes to a fresh file instead.
    public var maxBytes: Int
    /// Rotated files kept (`FILE.1` to `FILE.<keep>`); an older one is overwritten by the rename that would make it
    /// `FILE.<keep + 1>`.
    public var keep: Int

    /// KEEP when `--rotate` gives none.
    public static let defaultKeep = 5
    /// Rotated files at most.
    public static let keepRange = 1...1000
    /// From 1 KiB to 1 TiB.
    public static let sizeRange = 1 << 10...1 << 40

    public init(maxBytes: Int, keep: Int = defaultKeep) {
        self.maxBytes = maxBytes
        self.keep = keep
    }

    /// Whether a record of `recordBytes` goes to a fresh file when the current one holds `currentBytes`: only between
    /// records, never for an empty file (a record larger than the size has a file of its own).
    public func rotatesBefore(recordBytes: Int, currentBytes: Int) -> Bool {
        currentBytes > 0 && currentBytes + recordBytes > maxBytes
    }

    /// The renames of one rotation, in the order to make them: oldest first, so no file is renamed over one not yet
    /// moved; the last moves `path` itself to `path.1`.
    public func renames(of path: String) -> [(from: String, to: String)] {
        stride(from: keep - 1, through: 1, by: -1).map { ("\(path).\($0)", "\(path).\($0 + 1)") } + [
            (path, "\(path).1")
        ]
    }

    /// Reads `SIZE[,KEEP]`: a whole number with the unit `K`, `M` or `G` (KiB, MiB, GiB; `10M`), then optionally a
    /// comma and how many rotated files to keep (`10M,5`).
    public static func parse(_ text: String) -> Result<OutputRotation, Failure> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return .failure(.shape) }
        if parts.contains(where: { $0.hasPrefix("-") }) { return .failure(.negative) }
        let size = parts[0]
        let digits = size.prefix { $0.isASCII && $0.isNumber }
        let unit = size.dropFirst(digits.count)
        guard !digits.isEmpty else { return .failure(.shape) }
        guard !unit.isEmpty else { return .failure(.missingUnit) }
        guard let shift = ["K": 10, "M": 20, "G": 30][unit.uppercased()] else {
            return .failure(.unknownUnit(String(unit)))
        }
        let significant = digits.drop { $0 == "0" }
        guard !significant.isEmpty else { return .failure(.zero) }
        guard significant.count <= 10, let number = Int(significant), number <= sizeRange.upperBound >> shift else {
            return .failure(.tooLarge)
        }
        var rotation = OutputRotation(maxBytes: number << shift)
        if parts.count == 2 {
            let keepText = parts[1]
            guard !keepText.isEmpty, keepText.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .failure(.keep) }
            guard keepText.contains(where: { $0 != "0" }) else { return .failure(.keepZero) }
            guard keepText.count <= 5, let keep = Int(keepText), keepRange.contains(keep) else {
                return .failure(.keep)
            }
            rotation.keep = keep
        }
        return .success(rotation)
    }

    /// Why a text is not a rotation; completes "The value '…' is invalid for '--rotate <size[,keep]>': …".
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case shape
        case missingUnit
        case unknownUnit(String)
        case zero
        case negative
        case tooLarge
        case keep
        case keepZero

        public var description: String {
            switch self {
            case .shape: "expected SIZE[,KEEP], such as 10M or 10M,5"
            case .missingUnit: "the size needs a unit (K, M or G), such as 10M"
            case .unknownUnit(let unit): "unknown unit '\(unit)' for the size; use K, M or G"
            case .zero: "the size must be greater than zero"
            case .negative: "the size and KEEP must be positive"
            case .tooLarge: "the size must be at most 1024G"
            case .keep: "KEEP, after the comma, must be a whole number from 1 to \(OutputRotation.keepRange.upperBound)"
            case .keepZero: "KEEP must be at least 1: rotation keeps the file before the current one"
            }
        }
    }
}
