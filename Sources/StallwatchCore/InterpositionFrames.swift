// The agent's own frames between a program's loop and its callouts: how they are left out of every stack shown.

/// Leaves the agent's interposition frames out of a captured stack.
///
/// Under `stallwatch run` (and in library mode) the agent stands in for the run loop's entry points, so every stack
/// of a watched loop passes through a few of its frames (the stand-in, the publishing run, the call handing on to the
/// real function). They are the tool's, not the program's: users should see the stack the program would have without
/// it, and flame graphs and exports should not gain a layer. A stall in the agent's own code is still shown: frames of
/// the agent with only the C library (its system calls) inside them are the thread's real position.
public enum InterpositionFrames {
    /// File-name prefix of the agent's library, injected or linked.
    static let agentImagePrefix = "libStallwatchAgent"

    /// Images that run only on the agent's behalf when called from it: a system call wrapper, the vDSO.
    static let callPrefixes = ["libc.so", "libc-", "ld-linux", "libpthread", "linux-vdso", "[vdso]"]

    /// Whether an image (path or name) is the agent's library.
    public static func isAgentImage(_ image: String?) -> Bool {
        guard let image else { return false }
        return (image.split(separator: "/").last.map(String.init) ?? image).hasPrefix(agentImagePrefix)
    }

    /// `frames` (innermost first) without the agent's frames that only pass a call on to other code.
    ///
    /// A run of agent frames is kept when nothing but C library frames lie inside it: the thread is then in the
    /// agent's own work (or a system call it made), which is what a report must show.
    public static func hidden(from frames: [Frame]) -> [Frame] {
        hidden(from: frames, truncation: nil).frames
    }

    /// As ``hidden(from:)``, with a truncation's index of the first outermost frame moved to match.
    public static func hidden(
        from frames: [Frame], truncation: StackTruncation?
    ) -> (frames: [Frame], truncation: StackTruncation?) {
        guard frames.contains(where: { isAgentImage($0.image) }) else { return (frames, truncation) }
        var kept: [Frame] = []
        kept.reserveCapacity(frames.count)
        var truncation = truncation
        let resumesAt = truncation?.resumesAt ?? 0
        // Whether a frame inside the current position belongs to neither the agent nor the C library.
        var otherCodeInside = false
        for (index, frame) in frames.enumerated() {
            if isAgentImage(frame.image) {
                if otherCodeInside {
                    if index < resumesAt { truncation?.resumesAt -= 1 }
                    continue
                }
            } else if !isCall(frame.image) {
                otherCodeInside = true
            }
            kept.append(frame)
        }
        return (kept, truncation)
    }

    private static func isCall(_ image: String?) -> Bool {
        guard let image else { return false }
        let name = image.split(separator: "/").last.map(String.init) ?? image
        return callPrefixes.contains { name.hasPrefix($0) }
    }
}
