// A snapshot of which ELF images a process has loaded where, taken while the process is alive.
import Foundation
@_spi(Internal) @_spi(MemoryReaders) import Runtime

/// The images (executable, shared libraries, vDSO) mapped into one process at one moment.
///
/// Take it right after capturing a stack: symbolication happens later, possibly after the process exited.
/// Wraps the toolchain's `Runtime.ImageMap`, which reads `/proc/PID/maps` and each image's build ID.
public struct ProcessImages: @unchecked Sendable {
    let map: ImageMap

    init(map: ImageMap) {
        self.map = map
    }

    /// The images of another process. Reading its memory needs the same permission as ptrace.
    public static func capture(pid: Int32) -> ProcessImages {
        ProcessImages(map: ImageMap.capture(using: RemoteMemoryReader(pid: pid as Any), forProcess: Int(pid)))
    }

    /// The images of the calling process (used by the agent, which then sends them to the collector).
    public static func captureCurrentProcess() -> ProcessImages {
        ProcessImages(map: ImageMap.capture())
    }

    /// A portable encoding, to carry the map from the agent to the collector.
    public func encoded() -> [UInt8] {
        (try? JSONEncoder().encode(map)).map { [UInt8]($0) } ?? []
    }

    /// Decodes ``encoded()``; `nil` if the bytes are not an image map.
    public init?(encoded bytes: [UInt8]) {
        guard let map = try? JSONDecoder().decode(ImageMap.self, from: Data(bytes)) else { return nil }
        self.map = map
    }

    public var count: Int { map.count }

    /// The path (or name) of the image that contains `address`, and the address's offset from its base.
    public func image(containing address: UInt64) -> (path: String, offset: UInt64)? {
        guard let index = map.indexOfImage(at: Backtrace.Address(address)) else { return nil }
        let image = map[index]
        let base = UInt64(image.baseAddress) ?? 0
        return (image.path ?? image.name ?? "?", address >= base ? address - base : 0)
    }
}
