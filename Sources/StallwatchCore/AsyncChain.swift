// Following a Swift task's chain of async contexts, from the running function out to the task's entry: the async
// callers, which are on the heap and not on the native stack. Pure: memory comes through a reader.

/// Reads another process's (or this process's) memory one word at a time, failing instead of faulting.
public protocol ProcessMemoryReader {
    /// The little-endian 64-bit word at `address`.
    func word(at address: UInt64) throws(MemoryReadError) -> UInt64
}

/// Why a word could not be read.
public struct MemoryReadError: Error, Equatable, Sendable {
    public var address: UInt64
    /// `errno` of the failed read, 0 if the read was short or refused for another reason.
    public var errno: Int32

    public init(address: UInt64, errno: Int32) {
        self.address = address
        self.errno = errno
    }
}

/// Where, in one native frame, a Swift async function may keep its async context; both read at the capture.
public struct AsyncContextHint: Equatable, Sendable {
    /// The word of the frame's async frame record (just below its frame pointer), 0 if the frame has none.
    public var frameRecord: UInt64
    /// The frame's r14, the register the swiftasync calling convention passes the context in.
    public var register: UInt64

    public init(frameRecord: UInt64, register: UInt64) {
        self.frameRecord = frameRecord
        self.register = register
    }

    /// The candidates, the more trustworthy first: a frame record holds the function's own context for as long as
    /// the frame lives, while r14 may have moved on to a callee's context (after an awaited call returned).
    public var candidates: [UInt64] {
        var candidates: [UInt64] = []
        for value in [frameRecord, register] where value != 0 && !candidates.contains(value) {
            candidates.append(value)
        }
        return candidates
    }
}

/// The chain of an async function's callers, read from its async context.
///
/// Each context (swift/ABI/Task.h, `AsyncContext`) begins with two words: its parent's context (the caller's, 0 at
/// the task's entry) and the resume function, the partial function of the caller that runs once this call returns.
/// The walk is bounded, detects loops, and checks every word it follows, because the memory may be stale or hostile.
public enum AsyncChain {
    /// The most callers a walk follows: deeper chains are cut short and say so.
    public static let maxLinks = 128

    /// The callers found, outermost last, and why the walk stopped early, if it did.
    public struct Walk: Codable, Equatable, Sendable {
        /// The resume functions of the callers, innermost (the direct awaiting caller) first.
        public var resumePoints: [UInt64]
        /// Nil when the walk reached the task's entry (a context without parent).
        public var error: String?

        public init(resumePoints: [UInt64], error: String? = nil) {
            self.resumePoints = resumePoints
            self.error = error
        }
    }

    /// Follows the chain from `context`, the async context of the function running in the native frame.
    ///
    /// - Parameters:
    ///   - isCode: whether an address lies in a mapped image's code, which every resume function must.
    public static func walk(
        from context: UInt64, memory: some ProcessMemoryReader, maxLinks: Int = maxLinks, isCode: (UInt64) -> Bool
    ) -> Walk {
        var resumePoints: [UInt64] = []
        var seen: Set<UInt64> = []
        var current = context
        while current != 0 {
            guard resumePoints.count < maxLinks else {
                return Walk(resumePoints: resumePoints, error: "more than \(maxLinks) async callers: cut short")
            }
            // Task allocations are 16-byte aligned, and a context of less would not even be a pointer.
            guard current % 8 == 0, current <= UInt64.max - 16 else {
                return Walk(resumePoints: resumePoints, error: "async context \(hex(current)) is not a valid address")
            }
            guard seen.insert(current).inserted else {
                return Walk(resumePoints: resumePoints, error: "async context \(hex(current)) loops back")
            }
            let parent: UInt64
            let resume: UInt64
            do {
                parent = try memory.word(at: current)
                resume = try memory.word(at: current + 8)
            } catch {
                let reason = error.errno == 0 ? "" : " (errno \(error.errno))"
                return Walk(
                    resumePoints: resumePoints, error: "async context \(hex(current)) is not readable\(reason)")
            }
            // The task's entry context has no caller to resume.
            if parent == 0 && resume == 0 { break }
            guard isCode(resume) else {
                return Walk(
                    resumePoints: resumePoints,
                    error: "async context \(hex(current)) resumes at \(hex(resume)), outside any code")
            }
            resumePoints.append(resume)
            current = parent
        }
        return Walk(resumePoints: resumePoints)
    }

    private static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}

/// The async callers found for one captured stack, before they are named: after which of its addresses they go.
public struct AsyncCallersFound: Codable, Equatable, Sendable {
    /// The index, among the stack's addresses, of the native frame running the task.
    public var nativeFrame: Int
    public var walk: AsyncChain.Walk

    public init(nativeFrame: Int, walk: AsyncChain.Walk) {
        self.nativeFrame = nativeFrame
        self.walk = walk
    }
}

/// Names of Swift async functions as frames show them.
public enum AsyncFunction {
    /// Whether a name is an async function's resume partial function (`(2) suspend resume partial function for
    /// f()`, `(1) await resume partial function for f()`): the code of `f` after one of its suspension points.
    public static func isPartialFunction(_ symbol: String) -> Bool {
        partialFunctionPrefixEnd(symbol) != nil
    }

    /// The function a partial function belongs to (`f()` for both above), else the name as is: one function
    /// whichever of its suspension points it was at, and however many awaits an edit added before it.
    public static func logicalName(_ symbol: String) -> String {
        guard let end = partialFunctionPrefixEnd(symbol) else { return symbol }
        return String(symbol[end...])
    }

    private static func partialFunctionPrefixEnd(_ symbol: String) -> String.Index? {
        guard symbol.hasPrefix("("), let close = symbol.firstIndex(of: ")") else { return nil }
        let rest = symbol[symbol.index(after: close)...]
        for kind in [" suspend resume partial function for ", " await resume partial function for "]
        where rest.hasPrefix(kind) {
            return rest.index(rest.startIndex, offsetBy: kind.count)
        }
        return nil
    }
}
