// The messages between the agent (inside the workload) and the stallwatch collector, and how they travel.
import FoundationEssentials
import Glibc

/// What the agent tells the collector. One message per datagram on a `SOCK_SEQPACKET` socket.
public enum AgentMessage: Codable, Equatable, Sendable {
    /// The agent was loaded into a process (sent from its load-time constructor).
    case loaded(pid: Int32, agentVersion: String)
    /// The agent will not watch this process, and why (e.g. a different Swift runtime).
    case refused(pid: Int32, reason: String)
    /// The agent watches nothing in this process: the program loads no library whose loop it could watch (a C
    /// program, a Swift program with its runtime linked in). Its event loops are the collector's to find.
    case mainUnwatched(pid: Int32)
    /// The process is being watched: its main run loop ran for the first time (`strategy` `runLoop`), or its main
    /// queue answered a ping in a program with no run loop (`ping`).
    case watching(pid: Int32, tid: Int32, strategy: WatchStrategy? = nil)
    /// A stall was declared; the collector captures the thread's stack and answers.
    case stallBegan(pid: Int32, tid: Int32, onset: StallOnset)
    /// The stall goes on: the collector captures another sample and answers as for `stallBegan`.
    case stallSample(pid: Int32, tid: Int32, identifier: Int, index: Int)
    /// A declared stall ended.
    case stallEnded(pid: Int32, identifier: Int, endedAt: UInt64)
    /// The run loop's busy periods so far (a ``LatencyHistogram``, as `[bucket, count]` pairs for the
    /// non-empty buckets) and the longest one, exactly. Sent about once a second when it changed, and when the
    /// process exits.
    case busyPeriods(pid: Int32, buckets: [[UInt64]], maxNanoseconds: UInt64? = nil)
    /// The stack the agent captured itself, on the collector's request, with the process's image map
    /// (encoded by the symbolicator) because the collector may not be allowed to read it.
    /// `asyncCallers`: the async callers of the task the thread runs, read by the agent from its own heap, since
    /// the collector may not read it (absent when the thread runs none, and from older agents).
    case inProcessSample(
        pid: Int32, identifier: Int, addresses: [UInt64], asyncCallers: AsyncCallersFound? = nil,
        capturedAt: UInt64, imageMap: String?, error: String?)
    /// `--fps`: one second's frame-rate reading (a ``FrameRateMonitor/Reading``), about once a second.
    case frameRate(pid: Int32, start: UInt64, end: UInt64, frames: Int, droppedNanoseconds: UInt64)
    /// `--fps`: a run of slow frames worth reporting (a ``FrameRateMonitor/DropRecord``).
    case frameDrops(pid: Int32, begin: UInt64, end: UInt64, totalNanoseconds: UInt64, droppedNanoseconds: UInt64)
}

/// What the collector answers after a `stallBegan`.
public enum CollectorMessage: Codable, Equatable, Sendable {
    /// The collector captured the stack from outside; the agent has nothing to do.
    case captured(identifier: Int)
    /// The collector may not ptrace the process: the agent captures the stack in-process and sends it.
    case captureInProcess(identifier: Int, reason: String)
}

/// Encodes and decodes messages as compact JSON, one per datagram.
public enum WireFormat {
    /// Largest datagram either side sends: 64 KiB holds a 256-frame stack many times over.
    public static let maximumMessageSize = 65_536

    public static func encode<Message: Encodable>(_ message: Message) -> [UInt8] {
        // Encoding these plain enums cannot fail; an empty datagram is ignored by the reader.
        (try? JSONEncoder().encode(message)).map { [UInt8]($0) } ?? []
    }

    public static func decode<Message: Decodable>(_ type: Message.Type, from bytes: some Collection<UInt8>) -> Message?
    {
        try? JSONDecoder().decode(type, from: Data(bytes))
    }
}

/// The environment variables `stallwatch run` sets for the agent.
public enum AgentEnvironment {
    /// File descriptor number of the agent's end of the collector socket.
    public static let socket = "STALLWATCH_AGENT_FD"
    /// `--threshold` in nanoseconds.
    public static let thresholdNanoseconds = "STALLWATCH_THRESHOLD_NS"
    /// `--count`.
    public static let count = "STALLWATCH_COUNT"
    /// `--strategy`: `runloop`, `ping` or `auto` (the default when unset).
    public static let strategy = "STALLWATCH_STRATEGY"
    /// `--thread`: the selectors, one per line; unset means the main thread only.
    public static let threads = "STALLWATCH_THREADS"
    /// `--max-samples`: stacks per stall, one at detection and one per threshold after.
    public static let maxSamples = "STALLWATCH_MAX_SAMPLES"
    public static let maxFrames = "STALLWATCH_MAX_FRAMES"
    /// PID of the collector, which the agent allows to ptrace it (`PR_SET_PTRACER`) under Yama.
    public static let collectorPid = "STALLWATCH_COLLECTOR_PID"
    /// `--fps`: `1` to run the 60 Hz frame tick and report frame rates.
    public static let fps = "STALLWATCH_FPS"
    /// `--fps-max-frame` in nanoseconds: frames longer than this drop time.
    public static let fpsMaxFrameNanoseconds = "STALLWATCH_FPS_MAX_FRAME_NS"
    /// `--fps-pow`: how much more than linearly long frames weigh.
    public static let fpsPowFactor = "STALLWATCH_FPS_POW"
    /// `--fps-dump` in nanoseconds (``FrameRateMonitor/Configuration/dumpThreshold``).
    public static let fpsDumpNanoseconds = "STALLWATCH_FPS_DUMP_NS"
    /// Library mode only: its rate limit, `N/DURATION` or `off` (``RateLimit/parseSetting(_:)``).
    public static let rateLimit = "STALLWATCH_RATE_LIMIT"
    /// Library mode: `[HOST]:PORT` to serve the monitor's Prometheus metrics on (`stallwatch run --metrics` in the app).
    public static let metrics = "STALLWATCH_METRICS"
}

/// The project's version, shared by the CLI and the agent so a mismatch can be named.
public enum StallwatchVersion {
    public static let string = "0.1.0"
}
