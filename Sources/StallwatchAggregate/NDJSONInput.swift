// Reading inputs: files, FIFOs or stdin in fixed-size chunks, split into lines for a StallMerger.
import Glibc

/// Feeds files (or stdin, named `-`) to a ``StallMerger`` a line at a time, holding one chunk and one line.
public enum NDJSONInput {
    public static let standardInputName = "-"
    static let chunkSize = 1 << 20
    /// The longest line read as a record, here and by `--baseline`; a longer one is skipped, read no further than
    /// this. A stall record is about 250 bytes a frame: `--max-frames 4096` with the 10 samples a stall keeps by
    /// default is some 10 MiB, and frames with long (4 KiB) names at the default 256 frames about as much. Held in
    /// memory whole, so it also bounds what an endless line (`/dev/zero`) costs.
    public static let longestLine = 32 << 20
    /// UTF-8's byte order mark, which some editors and Windows tools write at the start of a file: skipped before
    /// the first line of an input.
    public static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    /// How long a FIFO may have no writer before ``Notice/waitingForWriter(_:)`` says so, milliseconds.
    static let writerNoticeMilliseconds: Int32 = 1000

    /// What the reader has to say while it reads, before the inputs' own ``SourceReport/warning``s.
    public enum Notice: Equatable, Sendable {
        /// A FIFO with no data (and no writer come and gone) after a second: reading waits, as `cat` would.
        case waitingForWriter(String)
        /// A line longer than ``longestLine``: skipped from there to its newline (input, line number).
        case overlongLine(String, line: Int)

        public var message: String {
            switch self {
            case .waitingForWriter(let name):
                "waiting for the FIFO '\(name)' to be written: it is read until its last writer closes it"
            case .overlongLine(let name, let line):
                "\(name == standardInputName ? "standard input" : "'\(name)'") line \(line) is longer than"
                    + " \(longestLine >> 20) MiB, which no stallwatch record is: skipped"
            }
        }
    }

    /// Reads every input into `merger`, in order; an input that cannot be opened or read is recorded in its
    /// ``SourceReport/readError`` and the others are still read.
    ///
    /// The files of a `--rotate` set (`FILE`, `FILE.1`, `FILE.2`, …, in whatever order a shell's `FILE*` gives them)
    /// are read oldest first as one stream (``RotatedFiles``).
    public static func read(_ names: [String], into merger: inout StallMerger, notice: (Notice) -> Void = { _ in }) {
        for (name, continuing) in RotatedFiles.order(names) {
            merger.beginSource(named: name, continuing: continuing)
            let descriptor: Int32
            if name == standardInputName {
                descriptor = STDIN_FILENO
            } else {
                // Non-blocking, or opening a FIFO would wait for a writer with no word to the user.
                descriptor = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                guard descriptor >= 0 else {
                    merger.sourceFailed(String(cString: strerror(errno)))
                    continue
                }
                waitForWriterIfFIFO(descriptor) { notice(.waitingForWriter(name)) }
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            }
            let error = read(descriptor: descriptor, into: &merger) { notice(.overlongLine(name, line: $0)) }
            if let error { merger.sourceFailed(error) }
            if descriptor != STDIN_FILENO { close(descriptor) }
        }
        merger.finishSource()
    }

    /// Waits until a FIFO has data or a writer that came and went (poll's `POLLHUP` comes only after a writer),
    /// calling `waiting` once if none came within ``writerNoticeMilliseconds``; returns at once for anything else.
    static func waitForWriterIfFIFO(_ descriptor: Int32, waiting: () -> Void) {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return }
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var timeout = writerNoticeMilliseconds
        while true {
            let ready = poll(&request, 1, timeout)
            if ready > 0 || (ready < 0 && errno != EINTR) { return }
            if ready == 0 {
                waiting()
                timeout = -1
            }
        }
    }

    /// Reads one descriptor to its end; returns the error that stopped it early, if any. `overlong` is told the
    /// number of each line skipped for its length.
    static func read(
        descriptor: Int32, into merger: inout StallMerger, longestLine: Int = longestLine, chunkSize: Int = chunkSize,
        overlong: (Int) -> Void
    ) -> String? {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var lines = LineSplitter(longestLine: longestLine)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            if count == 0 { break }
            chunk.withUnsafeBufferPointer {
                lines.feed(UnsafeBufferPointer(rebasing: $0[..<count]), into: &merger, overlong: overlong)
            }
        }
        lines.finish(into: &merger)
        return nil
    }

    /// Splits bytes already in memory into lines, as ``read(_:into:notice:)`` does a file.
    ///
    /// - Parameter chunkSize: hands the bytes on in pieces of this size, as reads of a file would (the fuzz target
    ///   reaches lines that span chunks with it, and overlong lines with a small `longestLine`).
    public static func read(
        bytes: [UInt8], named name: String, into merger: inout StallMerger, longestLine: Int = longestLine,
        chunkSize: Int = .max, notice: (Notice) -> Void = { _ in }
    ) {
        merger.beginSource(named: name)
        var lines = LineSplitter(longestLine: longestLine)
        bytes.withUnsafeBufferPointer { buffer in
            let size = max(1, chunkSize)
            var start = 0
            repeat {
                let end = buffer.count - start > size ? start + size : buffer.count
                lines.feed(UnsafeBufferPointer(rebasing: buffer[start..<end]), into: &merger) {
                    notice(.overlongLine(name, line: $0))
                }
                start = end
            } while start < buffer.count
        }
        lines.finish(into: &merger)
        merger.finishSource()
    }
}

/// Cuts a stream of chunks into lines, keeping at most ``longestLine`` bytes of a line that spans chunks: a line
/// longer than that is skipped to its newline, never held.
struct LineSplitter {
    let longestLine: Int
    /// The start of a line that continues in the next chunk.
    private var carry: [UInt8] = []
    /// Inside a line already found too long: everything up to its newline is dropped.
    private var skipping = false

    init(longestLine: Int) {
        self.longestLine = longestLine
    }

    mutating func feed(
        _ buffer: UnsafeBufferPointer<UInt8>, into merger: inout StallMerger, overlong: (Int) -> Void
    ) {
        var lineStart = 0
        while let index = Self.newline(in: buffer, from: lineStart, to: buffer.count) {
            let piece = UnsafeBufferPointer(rebasing: buffer[lineStart..<index])
            if skipping {
                skipping = false
            } else if carry.count + piece.count > longestLine {
                overlong(merger.skipLine())
                carry = []
            } else if carry.isEmpty {
                merger.read(line: piece)
            } else {
                carry.append(contentsOf: piece)
                carry.withUnsafeBufferPointer { merger.read(line: $0) }
                carry.removeAll(keepingCapacity: true)
            }
            lineStart = index + 1
        }
        guard !skipping, lineStart < buffer.count else { return }
        let rest = UnsafeBufferPointer(rebasing: buffer[lineStart...])
        if carry.count + rest.count > longestLine {
            overlong(merger.skipLine())
            carry = []
            skipping = true
        } else {
            carry.append(contentsOf: rest)
        }
    }

    /// The last line, when the input ended without a newline.
    mutating func finish(into merger: inout StallMerger) {
        if !carry.isEmpty { carry.withUnsafeBufferPointer { merger.read(line: $0, isLastWithoutNewline: true) } }
        carry = []
        skipping = false
    }

    /// The index of the next newline in `buffer[from..<to]` (memchr: lines are long).
    static func newline(in buffer: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let base = buffer.baseAddress,
            let found = memchr(base + from, 0x0A, to - from)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}
