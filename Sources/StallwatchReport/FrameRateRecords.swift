// How `--fps` readings and dropped-frame runs are rendered, in JSON and in text.
import StallwatchCore

extension JSONLinesReporter {
    /// `{"event":"fps", ...}` once a second, `{"event":"frame-drops", ...}` per run of dropped frames.
    public func render(_ frames: FrameRateReport) -> String {
        record(for: frames).serialized() + "\n"
    }

    func record(for frames: FrameRateReport) -> JSONValue {
        let schema: JSONValue = .int(Int64(Self.schemaVersion))
        switch frames.event {
        case .reading(let reading):
            let length = reading.end > reading.start ? reading.end - reading.start : 0
            return .object([
                ("event", .string("fps")),
                ("schemaVersion", schema),
                ("pid", .int(Int64(frames.pid))),
                ("startedAt", .string(clock.rfc3339(monotonic: reading.start))),
                ("seconds", .double((Double(length) / 1e6).rounded() / 1e3)),
                ("fps", .framesPerSecond(reading.framesPerSecond)),
                ("frames", .int(Int64(reading.frames))),
                ("droppedMs", .milliseconds(reading.dropped)),
            ])
        case .drops(let record):
            return .object([
                ("event", .string("frame-drops")),
                ("schemaVersion", schema),
                ("pid", .int(Int64(frames.pid))),
                ("startedAt", .string(clock.rfc3339(monotonic: record.begin))),
                ("endedAt", .string(clock.rfc3339(monotonic: record.end))),
                ("totalMs", .milliseconds(record.total)),
                ("droppedMs", .milliseconds(record.dropped)),
            ])
        }
    }
}

extension JSONValue {
    /// Frames per second to one decimal: finer would only be noise from the tick's jitter.
    static func framesPerSecond(_ value: Double) -> JSONValue {
        .double((value * 10).rounded() / 10)
    }
}

extension TextReporter {
    /// Most readings the summary's series lists; a longer run shows its first ones and the lowest.
    static let frameRateSeriesLimit = 120

    /// One line per run of dropped frames; the per-second readings go to the summary's series instead,
    /// so a long run does not print a line a second.
    public func render(_ frames: FrameRateReport) -> String {
        guard case .drops(let record) = frames.event else { return "" }
        return TerminalText.lines([
            "stallwatch: frames dropped in \(frames.processName) (pid \(frames.pid)):"
                + " \(Self.milliseconds(record.total)) ms of slow frames,"
                + " \(Self.milliseconds(record.dropped)) ms weighted"
        ]) + "\n"
    }

    /// `  frame rate (--fps): 60 60 59 11 60 60`, or nil without `--fps`.
    func frameRateSeries(_ summary: RunSummary) -> String? {
        guard let rates = summary.framesPerSecond else { return nil }
        let label = "  frame rate (--fps):"
        guard let lowest = rates.min() else { return label + " no readings (the main run loop never ran the tick)" }
        let shown = rates.prefix(Self.frameRateSeriesLimit).map { String(Int($0.rounded())) }
        var line = label + " " + shown.joined(separator: " ")
        if rates.count > shown.count {
            line += " … (\(rates.count - shown.count) more; lowest \(Int(lowest.rounded())))"
        }
        return line
    }
}
