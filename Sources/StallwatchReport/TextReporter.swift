// The human-readable format: a header that says how long and why, the culprit, then the stack.
import StallwatchCore

/// Renders stalls as short blocks of text for a terminal or a log.
///
/// The first stall with a given fingerprint gets the full block; later ones with the same fingerprint get
/// one line pointing back at it with the running count and total, so repeats never drown the output and
/// none is dropped.
public struct TextReporter: Reporter {
    let clock: WallClock
    let style: TextStyle
    /// Per fingerprint: the first stall's number, and the repeats' count and total length so far.
    private var seen: [String: (first: Int, count: Int, total: UInt64)] = [:]

    public init(clock: WallClock, colored: Bool) {
        self.clock = clock
        self.style = TextStyle(enabled: colored)
    }

    public mutating func render(_ stall: StallReport) -> String {
        let fingerprint = stall.fingerprint
        if stall.suppressed { return TerminalText.lines([suppressedLine(stall)]) + "\n" }
        if var group = seen[fingerprint], !stall.samples.isEmpty {
            group.count += 1
            group.total += stall.duration ?? 0
            seen[fingerprint] = group
            return TerminalText.lines([repeatLine(stall, group: group)]) + "\n"
        }
        seen[fingerprint] = (stall.identifier, 1, stall.duration ?? 0)
        return TerminalText.lines(block(stall)) + "\n\n"
    }

    /// One line at detection: the full block follows when the stall ends.
    public func renderDetected(_ stall: StallReport) -> String {
        let detectedAfter = stall.detectedAt >= stall.start ? stall.detectedAt - stall.start : 0
        var line =
            "stallwatch: stall #\(stall.identifier) in \(stall.place) detected,"
            + " \(Self.milliseconds(detectedAfter)) ms so far"
        if let callout = stall.callout { line += " in \(callout.phrase)" }
        if let culprit = stall.dominantFrame?.symbol { line += ", in \(culprit)" }
        if stall.suppressed { line += " (over --rate-limit: shortened)" }
        return TerminalText.lines([line]) + "\n"
    }

    /// `stallwatch: stall #9 in Daemon (pid 42): 612 ms in a timer callout, in f() (fingerprint …; over --rate-limit:
    /// one sample, report shortened)`.
    func suppressedLine(_ stall: StallReport) -> String {
        var line = "stallwatch: stall #\(stall.identifier) in \(stall.place): \(length(of: stall))"
        if let callout = stall.callout { line += " in \(callout.phrase)" }
        if let culprit = stall.dominantFrame?.symbol { line += ", in \(culprit)" }
        return line + " (fingerprint \(stall.fingerprint); over --rate-limit: one sample, report shortened)"
    }

    /// `stallwatch: stall #5 in Daemon (pid 42): 612 ms, same as stall #1 (fingerprint …): ×3, 1.8 s in all`.
    func repeatLine(_ stall: StallReport, group: (first: Int, count: Int, total: UInt64)) -> String {
        "stallwatch: stall #\(stall.identifier) in \(stall.place): \(length(of: stall)),"
            + " same as stall #\(group.first) (\(stall.dominantFrame?.symbol ?? stall.fingerprint)):"
            + " ×\(group.count), \(Self.milliseconds(group.total)) ms in all"
    }

    func block(_ stall: StallReport) -> [String] {
        var headline =
            "stallwatch: stall #\(stall.identifier) in \(stall.place): \(length(of: stall))"
        if let callout = stall.callout { headline += " in \(callout.phrase)" }
        if let activity = stall.threadActivity { headline += ", \(activity.summary)" }
        var lines = [style.bold(headline)]
        lines.append(onsetLine(stall))
        if let attached = stall.attached { lines.append(modeLine(attached, mainThread: stall.isMainThreadStall)) }
        lines.append("  " + captureLine(stall) + "; fingerprint \(stall.fingerprint)")
        if let note = stall.confidenceNote { lines.append("  caution: \(note)") }
        if let note = stall.captureNote { lines.append("  note: \(note)") }
        if let census = stall.threadActivity?.cpuCensus, !census.holders.isEmpty {
            lines.append(
                "  while it waited for a CPU (detection to end, \(Self.milliseconds(census.windowNanoseconds)) ms),"
                    + " the CPUs ran: \(census.summary)")
        }
        let dominant = stall.dominantFrame
        if let dominant {
            let presence = stall.samples.filter { $0.frames.contains { $0.symbol == dominant.symbol } }.count
            let share = stall.samples.count > 1 ? " (in \(presence) of \(stall.samples.count) samples)" : ""
            lines.append(style.bold("  culprit: \(dominant.symbol ?? "?")\(Self.location(of: dominant))\(share)"))
        }
        if stall.samples.count > 1 {
            lines.append("  samples: " + timeline(stall))
        }
        let shown =
            stall.samples.first { sample in sample.frames.contains { $0.symbol == dominant?.symbol } }
            ?? stall.samples.first
        if let shown {
            lines.append(contentsOf: stack(shown.frames, truncation: shown.truncation))
            if let cutShort = shown.cutShort { lines.append("  note: \(cutShort)") }
        }
        lines.append(contentsOf: blockerLines(stall))
        return lines
    }

    /// "601 ms" or "unfinished (...)".
    func length(of stall: StallReport) -> String {
        if let duration = stall.duration { return "\(Self.milliseconds(duration)) ms" }
        let end = stall.attached == nil ? "the run ended" : "stallwatch detached"
        let soFar = stall.watchedUntil == nil ? "" : ", \(Self.milliseconds(stall.length())) ms so far"
        return "unfinished (still stalled when \(end))\(soFar)"
    }

    /// When the stall began and when it was detected: in which run-loop phase, or (seen from outside, where no
    /// phase is seen) out of which wait.
    func onsetLine(_ stall: StallReport) -> String {
        let detectedAfter = stall.detectedAt >= stall.start ? stall.detectedAt - stall.start : 0
        guard let attached = stall.attached, !attached.mode.knowsLoopPhase else {
            let mode = stall.mode.map { ", run-loop mode \($0)" } ?? ""
            let strategy =
                stall.phase == .task
                ? " by the executor's job hand-offs" : stall.strategy.map { " by \($0.watchedBy)" } ?? ""
            return "  began \(clock.timeOfDay(monotonic: stall.start)) in \(stall.phase.name)"
                + " (\(stall.phase.explanation))\(mode); detected after \(Self.milliseconds(detectedAfter)) ms"
                + " (\(stall.count) × \(Self.milliseconds(stall.thresholdNanoseconds)) ms)\(strategy)"
        }
        let began =
            attached.startedBeforeAttach
            ? "already stalled when stallwatch attached at \(clock.timeOfDay(monotonic: stall.start))"
            : attached.mode == .kernel
                ? "began \(clock.timeOfDay(monotonic: stall.start)), out of its event-loop wait"
                : "began ~\(clock.timeOfDay(monotonic: stall.start)), out of its event-loop wait"
        let how =
            attached.mode == .kernel
            ? "\(stall.count) × \(Self.milliseconds(stall.thresholdNanoseconds)) ms" : "\(stall.count) busy samples"
        return "  \(began); detected after \(Self.milliseconds(detectedAfter)) ms (\(how))"
    }

    /// "  mode: external (...)": how an attached process was watched.
    func modeLine(_ attached: AttachedStall, mainThread: Bool = true) -> String {
        switch attached.mode {
        case .agent:
            return "  mode: agent (the process's own agent timed its run loop's transitions exactly)"
        case .external:
            let interval = attached.resolutionNanoseconds ?? 0
            return "  mode: external (the \(mainThread ? "main thread" : "thread")'s state sampled from /proc every"
                + " \(Self.milliseconds(interval)) ms: start and end each within"
                + " ±\(Self.milliseconds(interval / 2)) ms)"
        case .kernel:
            return "  mode: kernel (the kernel's trace timed the \(mainThread ? "main thread" : "thread")'s event-loop"
                + " waits exactly)"
        }
    }

    /// "5 samples by ptrace, thread stopped 0.16 ms median".
    func captureLine(_ stall: StallReport) -> String {
        let count = stall.samples.count
        let samples = "\(count) sample\(count == 1 ? "" : "s")"
        switch stall.captureMethod {
        case .ptrace:
            let stopped = stall.samples.compactMap(\.stoppedNanoseconds).sorted()
            let median =
                stopped.isEmpty ? "" : ", thread stopped \(Self.precise(stopped[stopped.count / 2])) ms median"
            return "\(samples) by ptrace\(median)"
        case .signal: return "\(samples) in-process with a signal"
        case .none: return "no stack captured"
        }
    }

    /// Each sample's time into the stall and its innermost application function, consecutive samples in the
    /// same function merged: how the stall unfolded ("+241–561 ms A (5), +641 ms B").
    func timeline(_ stall: StallReport) -> String {
        var runs: [(first: UInt64, last: UInt64, name: String, count: Int)] = []
        for sample in stall.samples {
            let offset = sample.capturedAt >= stall.start ? sample.capturedAt - stall.start : 0
            let frame =
                sample.frames.first(where: UserCode.isUserWritten)
                ?? sample.frames.first(where: ImageClassifier.isApplicationFrame) ?? sample.frames.first
            let name = Self.shortName(frame?.symbol ?? "?")
            if let last = runs.last, last.name == name {
                runs[runs.count - 1] = (last.first, offset, name, last.count + 1)
            } else {
                runs.append((offset, offset, name, 1))
            }
        }
        return runs.map { run in
            run.count == 1
                ? "+\(Self.milliseconds(run.first)) ms \(run.name)"
                : "+\(Self.milliseconds(run.first))–\(Self.milliseconds(run.last)) ms \(run.name) (\(run.count))"
        }.joined(separator: ", ")
    }

    /// `ChecksumEngine.crunchChecksums` from `static ChecksumEngine.crunchChecksums(until:)`.
    static func shortName(_ symbol: String) -> String {
        var name = Substring(symbol)
        while let prefix = ["static ", "specialized ", "merged ", "closure #1 in "].first(where: name.hasPrefix) {
            name = name.dropFirst(prefix.count)
        }
        if let parenthesis = name.firstIndex(of: "(") { name = name[..<parenthesis] }
        return String(name)
    }

    /// The stack as aligned columns: index, symbol, image+offset, source location. The frames `truncation` left out
    /// are one line where they were, and the outermost frames keep their depth as numbers.
    func stack(_ frames: [Frame], truncation: StackTruncation? = nil) -> [String] {
        let symbols = frames.map { frame in
            (frame.inlined ? "[inlined] " : "") + (frame.async ? "[async] " : "")
                + (frame.symbol ?? "0x" + String(frame.address, radix: 16))
        }
        let width = min(72, symbols.map(\.count).max() ?? 0)
        let resumesAt = truncation.map { min($0.resumesAt, frames.count) } ?? frames.count
        let lines = zip(frames.indices, zip(frames, symbols)).map { index, pair in
            let (frame, symbol) = pair
            let depth = index >= resumesAt ? index + (truncation?.omittedFrames ?? 0) : index
            let number = String(depth).leftPadded(to: 3)
            let image = frame.imageName.map { name in "\(name) +0x\(String(frame.offset ?? 0, radix: 16))" } ?? ""
            var line = "   #\(number)  \(symbol.rightPadded(to: width))  \(image)"
            let location = Self.location(of: frame)
            if !location.isEmpty { line += " " + location.trimmingLeadingSpace() }
            let isCulprit = UserCode.isUserWritten(frame)
            return isCulprit ? style.bold(line) : line
        }
        guard let truncation else { return lines }
        return Array(lines[..<resumesAt]) + ["   ...   \(truncation.reason)"] + Array(lines[resumesAt...])
    }

    /// ` at File.swift:12:5` for frames with a source location, otherwise empty.
    static func location(of frame: Frame) -> String {
        guard let file = frame.file else { return "" }
        let name = file.split(separator: "/").last.map(String.init) ?? file
        var text = " at \(name)"
        if let line = frame.line { text += ":\(line)" }
        if let column = frame.column { text += ":\(column)" }
        return text
    }

    static func milliseconds(_ nanoseconds: UInt64) -> String { String(Int((Double(nanoseconds) / 1e6).rounded())) }

    static func precise(_ nanoseconds: UInt64) -> String {
        let hundredths = Int((Double(nanoseconds) / 1e4).rounded())
        return "\(hundredths / 100).\(String(hundredths % 100).leftPadded(to: 2, with: "0"))"
    }

    static func seconds(_ nanoseconds: UInt64) -> String {
        let tenths = Int((Double(nanoseconds) / 1e8).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func percent(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)%"
    }
}

/// Bold text when colour is on; nothing otherwise.
struct TextStyle: Sendable {
    let enabled: Bool

    func bold(_ text: String) -> String { enabled ? "\u{1B}[1m" + text + "\u{1B}[0m" : text }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = " ") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }

    func rightPadded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func trimmingLeadingSpace() -> String { String(drop { $0 == " " }) }
}

extension WatchStrategy {
    /// How a report says a process was watched: "stall detected by …", "watched by …".
    var watchedBy: String {
        switch self {
        case .runLoop: "run-loop observers"
        case .ping: "main-queue pings (no run loop: dispatchMain or an async main)"
        case .auto: "run-loop observers or main-queue pings"
        }
    }
}
