// gzip through zlib (CStallwatchZlib): the pprof format is a gzipped protobuf.
import CStallwatchZlib

enum Gzip {
    /// A gzip member holding `bytes`, compressed with zlib's default level.
    static func compress(_ bytes: [UInt8]) -> [UInt8] {
        let capacity = sw_gzip_bound(bytes.count)
        var output = [UInt8](repeating: 0, count: capacity)
        let written = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                sw_gzip(input.baseAddress, input.count, out.baseAddress, out.count)
            }
        }
        // The bound always suffices; a zero means zlib itself failed, which its default settings never do.
        precondition(written > 0, "zlib failed to compress \(bytes.count) bytes")
        return Array(output.prefix(written))
    }
}
