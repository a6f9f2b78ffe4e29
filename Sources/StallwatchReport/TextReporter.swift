// The human-readable format: a header that says how long and why, the culprit, then the stack.
import StallwatchCore

/// Renders stalls as short blocks of text for a terminal or a log.
public struct TextReporter: Reporter {
    let clock: WallClock
    let style: TextStyle

    public init(clock: WallClock, colored: Bool) {
        self.clock = clock
        self.style = TextStyle(enabled: colored)
    }

    public func render(_ stall: StallReport) -> String {
        var lines: [String] = []
        let length =
            stall.duration.map { "\(Self.milliseconds($0)) ms" } ?? "unfinished (still stalled when the run ended)"
        lines.append(
            style.bold("stallwatch: stall #\(stall.identifier) in \(stall.processName) (pid \(stall.pid)): \(length)"))
        lines.append(
            "  began \(clock.timeOfDay(monotonic: stall.start)) in \(stall.phase.name): \(stall.phase.explanation)")
        let detectedAfter = stall.detectedAt >= stall.start ? stall.detectedAt - stall.start : 0
        var detection =
            "  detected after \(Self.milliseconds(detectedAfter)) ms"
            + " (\(stall.count) × \(Self.milliseconds(stall.thresholdNanoseconds)) ms)"
        switch stall.captureMethod {
        case .ptrace:
            let stopped = stall.samples.first?.stoppedNanoseconds.map { ", main thread stopped \(Self.precise($0)) ms" }
            detection += "; stack captured with ptrace\(stopped ?? "")"
        case .signal: detection += "; stack captured in-process with a signal"
        case .none: detection += "; no stack captured"
        }
        lines.append(detection)
        if let note = stall.captureNote { lines.append("  note: \(note)") }
        if let culprit = stall.culprit {
            lines.append(style.bold("  culprit: \(culprit.symbol ?? "?")\(Self.location(of: culprit))"))
        }
        if let sample = stall.samples.first {
            lines.append(contentsOf: stack(sample.frames))
        }
        return lines.joined(separator: "\n") + "\n\n"
    }

    public func render(_ summary: RunSummary) -> String {
        var lines: [String] = []
        let share =
            summary.runNanoseconds > 0
            ? Double(summary.totalStallNanoseconds) / Double(summary.runNanoseconds) * 100 : 0
        var headline = "stallwatch: \(summary.stallCount) stall\(summary.stallCount == 1 ? "" : "s")"
        if summary.stallCount > 0 {
            headline +=
                ", \(Self.milliseconds(summary.totalStallNanoseconds)) ms stalled"
                + " (\(Self.percent(share)) of \(Self.seconds(summary.runNanoseconds)) s)"
                + ", longest \(Self.milliseconds(summary.longestStallNanoseconds)) ms"
            if summary.unfinishedCount > 0 { headline += ", \(summary.unfinishedCount) unfinished" }
        } else {
            headline += " in \(Self.seconds(summary.runNanoseconds)) s"
        }
        if let status = summary.exitStatus { headline += "; workload exited with status \(status)" }
        lines.append(style.bold(headline))
        for warning in summary.warnings {
            lines.append("stallwatch: warning: \(warning)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The stack as aligned columns: index, symbol, image+offset, source location.
    func stack(_ frames: [Frame]) -> [String] {
        let symbols = frames.map { frame in
            (frame.inlined ? "[inlined] " : "") + (frame.symbol ?? "0x" + String(frame.address, radix: 16))
        }
        let width = min(72, symbols.map(\.count).max() ?? 0)
        return zip(frames.indices, zip(frames, symbols)).map { index, pair in
            let (frame, symbol) = pair
            let number = String(index).leftPadded(to: 3)
            let image = frame.imageName.map { name in "\(name) +0x\(String(frame.offset ?? 0, radix: 16))" } ?? ""
            var line = "   #\(number)  \(symbol.rightPadded(to: width))  \(image)"
            let location = Self.location(of: frame)
            if !location.isEmpty { line += " " + location.trimmingLeadingSpace() }
            let isCulprit = ImageClassifier.isApplicationFrame(frame)
            return isCulprit ? style.bold(line) : line
        }
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
