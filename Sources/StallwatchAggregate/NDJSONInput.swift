// Reading inputs: files or stdin in fixed-size chunks, split into lines for a StallMerger.
import Glibc

/// Feeds files (or stdin, named `-`) to a ``StallMerger`` a line at a time, holding one chunk and one line.
public enum NDJSONInput {
    public static let standardInputName = "-"
    static let chunkSize = 1 << 20

    /// Reads every input into `merger`, in order; an input that cannot be opened or read is recorded in its
    /// ``SourceReport/readError`` and the others are still read.
    public static func read(_ names: [String], into merger: inout StallMerger) {
        for name in names {
            merger.beginSource(named: name)
            let descriptor: Int32
            if name == standardInputName {
                descriptor = STDIN_FILENO
            } else {
                descriptor = open(name, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    merger.sourceFailed(String(cString: strerror(errno)))
                    continue
                }
            }
            if let error = read(descriptor: descriptor, into: &merger) { merger.sourceFailed(error) }
            if descriptor != STDIN_FILENO { close(descriptor) }
        }
        merger.finishSource()
    }

    /// Reads one descriptor to its end; returns the error that stopped it early, if any.
    static func read(descriptor: Int32, into merger: inout StallMerger) -> String? {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var carry: [UInt8] = []
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            if count == 0 { break }
            chunk.withUnsafeBufferPointer { buffer in
                var lineStart = 0
                while let index = newline(in: buffer, from: lineStart, to: count) {
                    if carry.isEmpty {
                        merger.read(line: UnsafeBufferPointer(rebasing: buffer[lineStart..<index]))
                    } else {
                        carry.append(contentsOf: buffer[lineStart..<index])
                        carry.withUnsafeBufferPointer { merger.read(line: $0) }
                        carry.removeAll(keepingCapacity: true)
                    }
                    lineStart = index + 1
                }
                carry.append(contentsOf: buffer[lineStart..<count])
            }
        }
        if !carry.isEmpty { carry.withUnsafeBufferPointer { merger.read(line: $0, isLastWithoutNewline: true) } }
        return nil
    }

    /// The index of the next newline in `buffer[from..<to]` (memchr: lines are long).
    static func newline(in buffer: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let base = buffer.baseAddress,
            let found = memchr(base + from, 0x0A, to - from)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// Splits bytes already in memory into lines, as ``read(_:into:)`` does a file.
    public static func read(bytes: [UInt8], named name: String, into merger: inout StallMerger) {
        merger.beginSource(named: name)
        bytes.withUnsafeBufferPointer { buffer in
            var lineStart = 0
            for index in buffer.indices where buffer[index] == 0x0A {
                merger.read(line: UnsafeBufferPointer(rebasing: buffer[lineStart..<index]))
                lineStart = index + 1
            }
            if lineStart < buffer.count {
                merger.read(line: UnsafeBufferPointer(rebasing: buffer[lineStart...]), isLastWithoutNewline: true)
            }
        }
        merger.finishSource()
    }
}
