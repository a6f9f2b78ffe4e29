// Reports of `stallwatch attach`: the same records as `stallwatch run`, plus how the process was watched and how the
// watch ended.
import StallwatchCore

/// How `stallwatch attach` watched a process.
public enum WatchMode: String, Sendable, Equatable {
    /// Through the agent listening in the process: run-loop transitions, timed exactly, as under `run`.
    case agent
    /// From outside: the main thread's state sampled from `/proc` every threshold; times known to one sample.
    case external
}

/// Why an attach session ended.
public enum AttachEnding: Sendable, Equatable {
    /// `--duration` elapsed.
    case duration
    /// stallwatch received this signal (Ctrl-C is SIGINT).
    case signal(Int32)
    /// The watched process exited.
    case exited
    /// The process's agent closed the connection while the process went on.
    case agentDisconnected

    /// The `ended` value of the JSON summary.
    public var name: String {
        switch self {
        case .duration: "duration"
        case .signal: "signal"
        case .exited: "exited"
        case .agentDisconnected: "agentDisconnected"
        }
    }
}

/// Renders an attach session: each stall as `run`'s reporters do, with the watch mode added, and a summary that says
/// how the session ended.
///
/// It decorates ``TextReporter`` and ``JSONLinesReporter`` rather than changing them, so `run`'s output stays as it
/// is. JSON stall records gain `mode`, `resolutionMs` and `startedBeforeAttach` after `count`; in external mode
/// `activity` is `unknown` (no run-loop phase is seen from outside). The summary gains `mode`, `pid`, `ended` and
/// `signal`, and its `exitStatus` is null (the process is not stallwatch's child).
public struct AttachReporter: Sendable {
    private var text: TextReporter?
    private let json: JSONLinesReporter?
    private let mode: WatchMode
    /// External mode's sampling interval (the threshold).
    private let samplingInterval: UInt64?
    private let clock: WallClock

    /// - Parameters:
    ///   - json: JSON lines rather than text.
    ///   - samplingInterval: external mode's sampling interval in nanoseconds; nil in agent mode.
    public init(json: Bool, clock: WallClock, colored: Bool, mode: WatchMode, samplingInterval: UInt64?) {
        self.text = json ? nil : TextReporter(clock: clock, colored: colored)
        self.json = json ? JSONLinesReporter(clock: clock) : nil
        self.mode = mode
        self.samplingInterval = mode == .external ? samplingInterval : nil
        self.clock = clock
    }

    /// One stall.
    ///
    /// - Parameter startedBeforeAttach: the main thread was already busy at stallwatch's first look (external mode),
    ///   so the stall's start is that look, not its real start.
    public mutating func render(_ stall: StallReport, startedBeforeAttach: Bool = false) -> String {
        if let json {
            guard case .object(var pairs) = json.record(for: stall) else { return json.render(stall) }
            if mode == .external, let index = pairs.firstIndex(where: { $0.0 == "activity" }) {
                pairs[index].1 = .string("unknown")
            }
            let position = (pairs.firstIndex { $0.0 == "count" } ?? pairs.count - 1) + 1
            pairs.insert(
                contentsOf: [
                    ("mode", .string(mode.rawValue)),
                    ("resolutionMs", samplingInterval.map(JSONValue.milliseconds) ?? .null),
                    ("startedBeforeAttach", .bool(startedBeforeAttach)),
                ], at: position)
            return JSONValue.object(pairs).serialized() + "\n"
        }
        guard var text else { return "" }
        let rendered = text.render(stall)
        self.text = text
        var lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[0] = lines[0].replacingOccurrences(
            "unfinished (still stalled when the run ended)", with: "unfinished (still stalled when stallwatch detached)"
        )
        // A full block (headline, "began" line, ...); a repeat of an earlier stall is one line and says enough.
        if lines.count > 2 {
            if mode == .external { lines[1] = externalOnsetLine(stall, startedBeforeAttach: startedBeforeAttach) }
            lines.insert(modeLine, at: 2)
        }
        return lines.joined(separator: "\n")
    }

    /// "  mode: external (...)" under each full text block.
    var modeLine: String {
        switch mode {
        case .agent:
            return "  mode: agent (the process's own agent timed its run loop's transitions exactly)"
        case .external:
            let interval = samplingInterval ?? 0
            return "  mode: external (the main thread's state sampled from /proc every"
                + " \(TextReporter.milliseconds(interval)) ms: start and end each within"
                + " ±\(TextReporter.milliseconds(interval / 2)) ms)"
        }
    }

    /// Replaces the run-loop phase, which is unknown from outside, with what external mode saw.
    func externalOnsetLine(_ stall: StallReport, startedBeforeAttach: Bool) -> String {
        let detectedAfter = stall.detectedAt >= stall.start ? stall.detectedAt - stall.start : 0
        let began =
            startedBeforeAttach
            ? "already stalled when stallwatch attached at \(clock.timeOfDay(monotonic: stall.start))"
            : "began ~\(clock.timeOfDay(monotonic: stall.start)), out of its event-loop wait"
        return "  \(began); detected after \(TextReporter.milliseconds(detectedAfter)) ms"
            + " (\(stall.count) busy samples)"
    }

    /// The closing record: `run`'s summary, and how the session ended.
    public mutating func render(_ summary: RunSummary, pid: Int32, processName: String, ending: AttachEnding) -> String
    {
        if let json {
            guard case .object(var pairs) = json.record(for: summary) else { return json.render(summary) }
            var signal: JSONValue = .null
            if case .signal(let number) = ending { signal = .int(Int64(number)) }
            pairs += [
                ("mode", .string(mode.rawValue)), ("pid", .int(Int64(pid))), ("ended", .string(ending.name)),
                ("signal", signal),
            ]
            return JSONValue.object(pairs).serialized() + "\n"
        }
        guard var text else { return "" }
        let rendered = text.render(summary)
        self.text = text
        let after = "after \(TextReporter.seconds(summary.runNanoseconds)) s"
        let how: String
        switch ending {
        case .duration: how = "detached from pid \(pid) (\(processName)) \(after) (--duration); it keeps running"
        case .signal(let number):
            how = "detached from pid \(pid) (\(processName)) \(after) (\(Self.signalName(number))); it keeps running"
        case .exited: how = "pid \(pid) (\(processName)) exited \(after) of watching"
        case .agentDisconnected:
            how = "the agent in pid \(pid) (\(processName)) closed the connection \(after); the process keeps running"
        }
        return rendered + "stallwatch: \(how)\n"
    }

    static func signalName(_ number: Int32) -> String {
        switch number {
        case 2: "Ctrl-C, SIGINT"
        case 15: "SIGTERM"
        case 1: "SIGHUP"
        case 3: "SIGQUIT"
        default: "signal \(number)"
        }
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var replaced = self
        replaced.replaceSubrange(range, with: replacement)
        return replaced
    }
}
