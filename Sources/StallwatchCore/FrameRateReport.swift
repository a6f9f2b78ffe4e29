// What `--fps` produces, as the collector hands it to the reporters, and how its settings travel.
import FoundationEssentials
import Glibc

/// One frame-rate event of a watched process: a second's reading or a run of dropped frames.
public struct FrameRateReport: Equatable, Sendable {
    public var pid: Int32
    public var processName: String
    public var event: FrameRateMonitor.Event

    public init(pid: Int32, processName: String, event: FrameRateMonitor.Event) {
        self.pid = pid
        self.processName = processName
        self.event = event
    }
}

extension FrameRateMonitor.Configuration {
    /// The `--fps` settings in a workload's environment; nil when `--fps` was not given.
    ///
    /// Settings missing or out of range keep their defaults: the agent never refuses to watch over them,
    /// and the CLI has validated what it sets.
    public init?(environment: [String: String]) {
        guard let enabled = environment[AgentEnvironment.fps], !enabled.isEmpty, enabled != "0" else { return nil }
        self.init()
        if let maxFrame = environment[AgentEnvironment.fpsMaxFrameNanoseconds].flatMap(UInt64.init),
            maxFrame > frameInterval
        {
            maxFrameInterval = maxFrame
        }
        if let pow = environment[AgentEnvironment.fpsPowFactor].flatMap(Double.init), pow.isFinite, pow >= 1 {
            powFactor = pow
        }
        if let dump = environment[AgentEnvironment.fpsDumpNanoseconds].flatMap(UInt64.init), dump > 0 {
            dumpThreshold = dump
        }
    }

    /// The names of the variables in ``environment``.
    public static let environmentNames = [
        AgentEnvironment.fps, AgentEnvironment.fpsMaxFrameNanoseconds, AgentEnvironment.fpsPowFactor,
        AgentEnvironment.fpsDumpNanoseconds,
    ]

    /// The environment variables that carry these settings to the agent.
    public var environment: [String: String] {
        [
            AgentEnvironment.fps: "1",
            AgentEnvironment.fpsMaxFrameNanoseconds: String(maxFrameInterval),
            AgentEnvironment.fpsPowFactor: String(powFactor),
            AgentEnvironment.fpsDumpNanoseconds: String(maxDumpTimestamp),
        ]
    }
}
