// The option values: each converted, checked against its range, and stored in the options it sets.
import StallwatchCollector
import StallwatchCore
import StallwatchMetrics

extension ArgumentParser {
    /// Converts and stores option values in command-line order, so the last of a repeated option wins (`--thread`
    /// adds up instead).
    ///
    /// Only options ``scanOptions(_:topic:)`` accepted for `topic` reach it.
    static func apply(
        _ values: [(definition: ArgumentDefinition, value: String)],
        to parsed: inout ParsedOptions,
        topic: HelpTopic
    ) throws(UsageError) {
        for (definition, value) in values {
            func invalid(_ reason: String) -> UsageError {
                UsageError(
                    message: "The value '\(value)' is invalid for '\(definition.synopsis)'\(reason)", topic: topic)
            }
            switch definition.key {
            case .threshold:
                switch DurationParser.parse(value) {
                case .failure(let failure):
                    throw invalid(": \(failure)")
                case .success(let threshold) where threshold.nanoseconds < WatchSettings.thresholdRange.lowerBound:
                    let shortest = Duration.nanoseconds(WatchSettings.thresholdRange.lowerBound)
                    throw invalid(": the threshold must be at least \(DurationParser.format(shortest))")
                case .success(let threshold):
                    parsed.watch.threshold = threshold
                }
            case .count:
                let range = WatchSettings.countRange
                guard let count = Int(value), range.contains(count) else {
                    throw invalid(": expected a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                parsed.watch.count = count
            case .maxSamples:
                let range = WatchSettings.maxSamplesRange
                guard let samples = Int(value), range.contains(samples) else {
                    throw invalid(": expected a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                parsed.watch.maxSamples = samples
            case .maxFrames:
                let range = WatchSettings.maxFramesRange
                guard let frames = Int(value), range.contains(frames) else {
                    throw invalid(": expected a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                parsed.watch.settings.maxFrames = frames
            case .format:
                guard let format = OutputFormat(rawValue: value) else {
                    throw invalid(choices(OutputFormat.allCases.map(\.rawValue)))
                }
                parsed.watch.format = format
            case .reportFormat, .html, .export:
                try applyExport(definition, value: value, to: &parsed, topic: topic)
            case .rateLimit, .rotate:
                try applyProduction(definition, value: value, to: &parsed.watch, invalid: invalid)
            case .output:
                guard !value.isEmpty else { throw invalid(": expected a file name, or '-' for stdout") }
                parsed.watch.output = value
            case .color:
                guard let color = ColorChoice(rawValue: value) else {
                    throw invalid(choices(ColorChoice.allCases.map(\.rawValue)))
                }
                parsed.watch.color = color
            case .metrics:
                switch MetricsAddress.parse(value) {
                case .failure(let failure): throw invalid(": \(failure)")
                case .success(let address): parsed.watch.metrics = address
                }
            case .scenario:
                guard DemoScenario(rawValue: value) != nil else {
                    throw invalid(choices(DemoScenario.allCases.map(\.rawValue)))
                }
                parsed.scenario = value
            case .mode:
                guard let mode = AttachMode(rawValue: value) else {
                    throw invalid(choices(AttachMode.allCases.map(\.rawValue)))
                }
                parsed.mode = mode
            case .duration:
                switch DurationParser.parse(value) {
                case .failure(let failure): throw invalid(": \(failure)")
                case .success(let duration): parsed.duration = duration
                }
            case .allThreads:
                parsed.allThreads = true
            case .thread:
                let selector: ThreadSelector
                do throws(ThreadSelector.Invalid) {
                    selector = try ThreadSelector(parsing: value)
                } catch {
                    throw invalid(": \(error.reason)")
                }
                // The first --thread replaces the default (the main thread); the others add to it.
                if !parsed.threadsGiven { parsed.watch.settings.threads = [] }
                parsed.threadsGiven = true
                if !parsed.watch.settings.threads.contains(selector) { parsed.watch.settings.threads.append(selector) }
            case .source:
                guard let source = LoopSource(rawValue: value) else {
                    throw invalid(choices(LoopSource.allCases.map(\.rawValue)))
                }
                parsed.watch.settings.source = source
            case .strategy:
                guard let strategy = WatchStrategy(rawValue: value) else {
                    throw invalid(choices(WatchStrategy.allCases.map(\.rawValue)))
                }
                parsed.watch.strategy = strategy
            case .failOnStall:
                parsed.watch.budget.failOnStall = true
            case .maxStall, .maxTotal, .maxP99, .timeout:
                let duration: Duration
                switch DurationParser.parse(value) {
                case .failure(let failure): throw invalid(": \(failure)")
                case .success(let parsedDuration): duration = parsedDuration
                }
                let nanoseconds = duration.nanoseconds
                switch definition.key {
                case .maxStall: parsed.watch.budget.maxStall = nanoseconds
                case .maxTotal: parsed.watch.budget.maxTotal = nanoseconds
                case .maxP99: parsed.watch.budget.maxP99 = nanoseconds
                default: parsed.watch.timeout = duration
                }
            case .maxStalls:
                guard let count = Int(value), count >= 0 else {
                    throw invalid(": expected a whole number, 0 or more")
                }
                parsed.watch.budget.maxStalls = count
            case .fps:
                parsed.watch.frameRate = parsed.watch.frameRate ?? FrameRateMonitor.Configuration()
            case .fpsMaxFrame, .fpsPow, .fpsDump:
                var configuration = parsed.watch.frameRate ?? FrameRateMonitor.Configuration()
                switch definition.key {
                case .fpsMaxFrame:
                    let duration = try bounded(value, within: WatchSettings.fpsMaxFrameRange, invalid: invalid)
                    configuration.maxFrameInterval = duration.nanoseconds
                case .fpsDump:
                    let duration = try bounded(value, within: WatchSettings.fpsDumpRange, invalid: invalid)
                    configuration.dumpThreshold = duration.nanoseconds
                default:
                    let range = WatchSettings.fpsPowRange
                    guard let pow = Double(value), range.contains(pow) else {
                        throw invalid(
                            ": expected a number from \(Int(range.lowerBound)) to \(Int(range.upperBound))")
                    }
                    configuration.powFactor = pow
                }
                // Any of the three implies --fps.
                parsed.watch.frameRate = configuration
            case .junit, .baseline:
                guard !value.isEmpty else { throw invalid(": expected a file name") }
                if definition.key == .junit { parsed.watch.junit = value } else { parsed.watch.baseline = value }
            case .help, .version:
                break
            }
        }
        try checkDestinations(parsed.watch, topic: topic)
    }

    /// Two outputs may not share one destination: the JUnit document would land inside the report stream.
    private static func checkDestinations(_ watch: WatchOptions, topic: HelpTopic) throws(UsageError) {
        guard let junit = watch.junit else { return }
        if junit == WatchOptions.standardOutputPath, watch.reportsGoToStandardOutput {
            throw UsageError(
                message: "'--junit -' writes the JUnit report to standard output, where the reports already go;"
                    + " give the reports a file with '--output FILE'",
                topic: topic)
        }
        if let output = watch.output, output != WatchOptions.standardOutputPath,
            normalized(output) == normalized(junit)
        {
            throw UsageError(
                message: "'--output' and '--junit' both name '\(junit)'; give each a file of its own", topic: topic)
        }
    }

    /// A path without `./` steps and doubled slashes, to compare two spellings of one name.
    static func normalized(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }

    /// A duration option's value, checked against its accepted range.
    private static func bounded(
        _ value: String, within nanoseconds: ClosedRange<UInt64>, invalid: (String) -> UsageError
    ) throws(UsageError) -> Duration {
        let range = Duration.nanoseconds(nanoseconds.lowerBound)...Duration.nanoseconds(nanoseconds.upperBound)
        switch DurationParser.parse(value) {
        case .failure(let failure): throw invalid(": \(failure)")
        case .success(let duration) where !range.contains(duration):
            throw invalid(
                ": expected from \(DurationParser.format(range.lowerBound)) to \(DurationParser.format(range.upperBound))"
            )
        case .success(let duration): return duration
        }
    }
}
