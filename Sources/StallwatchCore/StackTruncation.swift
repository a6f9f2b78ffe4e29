// A stack deeper than the frames a capture keeps: which frames are left out, and why.

/// The frames a capture left out of a stack deeper than `--max-frames`.
///
/// The innermost frames (where the thread is) and the outermost ones (which thread it is, and how it got there)
/// are kept; the frames between them are left out, so `frames[..<resumesAt]` are the innermost and
/// `frames[resumesAt...]` the outermost. A walk that reached its own bound before the thread's start keeps no
/// outermost frames of the thread's first call: `walkLimit`.
public struct StackTruncation: Equatable, Sendable, Codable {
    /// How many frames were left out; nil when not counted (an in-process capture stops at the limit).
    public var omittedFrames: Int?
    /// The index in the stack's frames of the first outermost frame kept; `frames.count` when none were kept.
    public var resumesAt: Int
    /// The limit that cut the stack.
    public var maxFrames: Int
    /// The bound (in frames) at which the walk itself stopped, short of the thread's start; nil when it did not.
    public var walkLimit: Int?

    public init(omittedFrames: Int?, resumesAt: Int, maxFrames: Int, walkLimit: Int? = nil) {
        self.omittedFrames = omittedFrames
        self.resumesAt = resumesAt
        self.maxFrames = maxFrames
        self.walkLimit = walkLimit
    }

    /// Whether the walk stopped at its bound.
    public var walkLimited: Bool { walkLimit != nil }

    /// The truncation of a capture that kept `innerAddresses` innermost return addresses, then (after `omitted`)
    /// the rest, once its addresses are named as `frames` (inlined frames share their caller's address); nil when
    /// nothing was left out.
    public static func of(
        frames: [Frame], innerAddresses: Int, omitted: Int?, maxFrames: Int, walkLimit: Int? = nil
    ) -> StackTruncation? {
        guard omitted.map({ $0 > 0 }) ?? true || walkLimit != nil else { return nil }
        return StackTruncation(
            omittedFrames: omitted, resumesAt: frameIndex(afterAddresses: innerAddresses, in: frames),
            maxFrames: maxFrames, walkLimit: walkLimit)
    }

    /// The truncation of an in-process capture (the agent's, with a signal) that recorded `addressCount` addresses
    /// under `limit`: it stops at the limit, so what lies beyond is neither kept nor counted.
    public static func ofInProcessCapture(frames: [Frame], addressCount: Int, limit: Int) -> StackTruncation? {
        addressCount >= limit ? StackTruncation(omittedFrames: nil, resumesAt: frames.count, maxFrames: limit) : nil
    }

    /// The index of the first frame after the first `count` addresses' frames: each address's inlined frames come
    /// before its own, which is not inlined, and the async callers added after a frame have no address of their own.
    public static func frameIndex(afterAddresses count: Int, in frames: [Frame]) -> Int {
        var addresses = 0
        for (index, frame) in frames.enumerated() where !frame.inlined && !frame.async {
            addresses += 1
            if addresses == count { return index + 1 }
        }
        return frames.count
    }

    /// Why frames are missing, for people.
    public var reason: String {
        let kept = "the stack is deeper than the \(maxFrames) frames kept (--max-frames)"
        guard let omittedFrames else { return kept + ": the frames beyond them are left out" }
        let count = "\(omittedFrames) frame\(omittedFrames == 1 ? "" : "s")"
        let walk =
            walkLimited ? "; the walk stopped short of the thread's start, so the outermost are not its first" : ""
        return kept + ": \(count) between the innermost and the outermost left out" + walk
    }
}
