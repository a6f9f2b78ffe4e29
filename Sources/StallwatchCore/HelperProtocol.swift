// Library mode's capture helper: what an app that started `StallMonitor` asks the helper process that captures its
// stalled thread with ptrace, what the helper answers, and how the app finds and starts it.

/// What the app asks its capture helper, one message per datagram on their `SOCK_SEQPACKET` socketpair.
public enum HelperRequest: Codable, Equatable, Sendable {
    /// Capture thread `tid` of the app now and name its frames. `request` numbers the app's requests, so an answer
    /// that came too late for its own request is never taken for the next one's.
    case capture(request: Int, tid: Int32, maxFrames: Int)
}

/// What the capture helper tells the app.
public enum HelperAnswer: Codable, Equatable, Sendable {
    /// The helper runs and may be asked; sent once, first.
    case ready(pid: Int32, version: String)
    /// The stack of the request's thread, already symbolicated by the helper's full symbolicator.
    case captured(request: Int, stack: HelperStack)
    /// The helper may not ptrace the app (Yama, a missing `CAP_SYS_PTRACE`, a non-dumpable app): the app captures
    /// with a signal from now on; `reason` is advice for the report's capture note.
    case refused(request: Int, reason: String)
    /// This capture failed (the thread was gone, or would not stop in time); the next one may succeed.
    case failed(request: Int, reason: String, threadGone: Bool)
}

/// One stack the helper captured and named.
public struct HelperStack: Codable, Equatable, Sendable {
    public var frames: [Frame]
    /// When it was captured, `CLOCK_MONOTONIC` nanoseconds (the same clock in the app and the helper).
    public var capturedAt: UInt64
    /// How long the app's thread was stopped.
    public var stoppedNanoseconds: UInt64
    public var truncation: StackTruncation?
    /// libunwind's error if the walk ended early, else 0.
    public var unwindError: Int32
    /// Why the stack's async callers are missing or cut short, if they are (absent from older helpers).
    public var asyncCallersError: String?

    public init(
        frames: [Frame], capturedAt: UInt64, stoppedNanoseconds: UInt64, truncation: StackTruncation?,
        unwindError: Int32, asyncCallersError: String? = nil
    ) {
        self.asyncCallersError = asyncCallersError
        self.frames = frames
        self.capturedAt = capturedAt
        self.stoppedNanoseconds = stoppedNanoseconds
        self.truncation = truncation
        self.unwindError = unwindError
    }
}

/// How library mode finds and starts its helper: the `stallwatch` executable in a hidden role.
public enum CaptureHelperRole {
    /// The hidden subcommand: `stallwatch _capture-helper --fd N --pid P` (not in `stallwatch --help`).
    public static let subcommand = "_capture-helper"
    /// The executable's file name, looked for beside the agent library and beside the app's executable.
    public static let executableName = "stallwatch"
    /// The descriptor number the helper's end of the socketpair gets in the helper.
    public static let socketDescriptor: Int32 = 3
    /// Names the helper executable, after `StallMonitor.Configuration.helperPath` and before the places searched.
    public static let environmentVariable = "STALLWATCH_HELPER"
    /// The largest answer datagram: a deep stack with long Swift names and source paths exceeds the 64 KiB of the
    /// agent protocol; both ends size their buffers and the socket for this.
    public static let maximumAnswerSize = 1 << 20

    /// The arguments after the executable's path.
    public static func arguments(appPid: Int32) -> [String] {
        [subcommand, "--fd", String(socketDescriptor), "--pid", String(appPid)]
    }

    /// Where to look for the helper, first to last: the configured path alone if there is one, else the
    /// environment's, else `stallwatch` beside the agent library and beside the app's executable.
    public static func candidates(
        configured: String?, environment: [String: String], agentLibrary: String?, executable: String?
    ) -> [String] {
        if let configured { return [configured] }
        if let named = environment[environmentVariable], !named.isEmpty { return [named] }
        var places: [String] = []
        for file in [agentLibrary, executable].compactMap({ $0 }) {
            guard let slash = file.lastIndex(of: "/") else { continue }
            let path = file[..<slash] + "/" + executableName
            if !places.contains(path) { places.append(path) }
        }
        return places
    }
}
