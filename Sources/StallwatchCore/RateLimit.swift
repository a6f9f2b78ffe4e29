// `--rate-limit N/DURATION`: how many stalls of one fingerprint get a full report per window, and the pure window
// count that decides it, for the collector (`run`, `attach`) and library mode alike.

/// At most ``count`` full reports per fingerprint in each window of ``windowNanoseconds``.
///
/// A service that stalls every second the same way would otherwise write (and stop its thread for) a full report every
/// second; past the limit a stall keeps only the sample that named its fingerprint and gets a short record.
public struct RateLimit: Equatable, Sendable, CustomStringConvertible {
    /// Full reports per fingerprint and window.
    public var count: Int
    /// The window's length.
    public var windowNanoseconds: UInt64

    /// Counts a parsed limit may have.
    public static let countRange = 1...1_000_000
    /// From a second to 30 days: a shorter window limits nothing, a longer one outlives any run worth limiting.
    public static let windowRange: ClosedRange<UInt64> = 1_000_000_000...30 * 86_400 * 1_000_000_000
    /// Library mode's limit unless the app or `STALLWATCH_RATE_LIMIT` says otherwise (`run` and `attach` have none).
    public static let libraryDefault = RateLimit(count: 5, windowNanoseconds: 600_000_000_000)
    /// The value of `STALLWATCH_RATE_LIMIT` that turns library mode's limit off.
    public static let offValue = "off"

    public init(count: Int, windowNanoseconds: UInt64) {
        self.count = count
        self.windowNanoseconds = windowNanoseconds
    }

    /// Why the limit cannot be used, in a sentence; nil when it can.
    public var invalidReason: String? {
        if !Self.countRange.contains(count) { return "the count must be from 1 to \(Self.countRange.upperBound)" }
        if !Self.windowRange.contains(windowNanoseconds) { return "the window must be from 1s to 30d" }
        return nil
    }

    /// `5/10m`: the notation ``parse(_:)`` reads, in the largest unit that divides the window.
    public var description: String {
        let seconds = windowNanoseconds / 1_000_000_000
        let unit = Self.units.last { seconds % $0.seconds == 0 && seconds >= $0.seconds } ?? Self.units[0]
        return "\(count)/\(seconds / unit.seconds)\(unit.name)"
    }

    private static let units: [(name: Character, seconds: UInt64)] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]

    /// Reads `N/DURATION`: a whole number of reports, a slash, a whole number of seconds, minutes, hours or days (`s`,
    /// `m`, `h`, `d`), as in `2/1h` or `5/10m`.
    ///
    /// - Returns: The limit, or why `text` is not one, completing "The value '…' is invalid for '--rate-limit': …".
    public static func parse(_ text: String) -> Result<RateLimit, Failure> {
        guard let slash = text.firstIndex(of: "/") else { return .failure(.shape) }
        let countText = text[..<slash]
        let windowText = text[text.index(after: slash)...]
        if countText.hasPrefix("-") || windowText.hasPrefix("-") { return .failure(.negative) }
        guard !countText.isEmpty, countText.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .failure(.count) }
        let countDigits = countText.drop { $0 == "0" }
        guard !countDigits.isEmpty else { return .failure(.zero) }
        guard countDigits.count <= 7, let count = Int(countDigits), countRange.contains(count) else {
            return .failure(.count)
        }
        let digits = windowText.prefix { $0.isASCII && $0.isNumber }
        let unitText = windowText.dropFirst(digits.count)
        guard !digits.isEmpty else { return .failure(.shape) }
        guard !unitText.isEmpty else { return .failure(.missingUnit) }
        guard unitText.count == 1, let unit = units.first(where: { $0.name == unitText.first }) else {
            return .failure(.unknownUnit(String(unitText)))
        }
        let significant = digits.drop { $0 == "0" }
        guard !significant.isEmpty else { return .failure(.zero) }
        guard significant.count <= 9, let number = UInt64(significant) else { return .failure(.tooLong) }
        let nanoseconds = number * unit.seconds * 1_000_000_000
        guard windowRange.contains(nanoseconds) else { return .failure(.tooLong) }
        return .success(RateLimit(count: count, windowNanoseconds: nanoseconds))
    }

    /// Library mode's `STALLWATCH_RATE_LIMIT`: `off`, or a limit as ``parse(_:)`` reads it.
    ///
    /// - Returns: nil for `off`, the limit otherwise.
    public static func parseSetting(_ text: String) -> Result<RateLimit?, Failure> {
        text == offValue ? .success(nil) : parse(text).map { $0 }
    }

    /// Why a text is not a rate limit.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not `N/DURATION`.
        case shape
        /// The count is not a whole number in ``RateLimit/countRange``.
        case count
        /// A count or a window of zero.
        case zero
        /// A negative count or window.
        case negative
        /// A window without its unit (`5/10`).
        case missingUnit
        case unknownUnit(String)
        /// Longer than 30 days.
        case tooLong

        public var description: String {
            switch self {
            case .shape: "expected N/DURATION, full reports per fingerprint per window, such as 5/10m or 2/1h"
            case .count: "the count before '/' must be a whole number from 1 to \(RateLimit.countRange.upperBound)"
            case .zero:
                "the count and the window must be greater than zero; to report every stall in full, leave"
                    + " --rate-limit out"
            case .negative: "the count and the window must be positive"
            case .missingUnit: "the window needs a unit (s, m, h or d), such as 5/10m"
            case .unknownUnit(let unit): "unknown unit '\(unit)' for the window; use s, m, h or d"
            case .tooLong: "the window must be at most 30 days (30d)"
            }
        }
    }
}

/// The fixed windows of each fingerprint: which stalls get a full report under a ``RateLimit``.
///
/// A fingerprint's window opens at its first stall and lasts the limit's window; the first `count` stalls in it are
/// admitted, the rest are not; the first stall after it opens the next window. Pure: the caller hands in the moment
/// of each decision (a stall's detection), so a fake clock tests it.
public struct RateLimiter: Sendable {
    public let limit: RateLimit
    private var windows: [String: Window] = [:]

    private struct Window: Sendable {
        var start: UInt64
        var admitted: Int
        var suppressed: Int

        /// Whether `moment` falls in the window: from its start for `length`, or before its start (out of order).
        func contains(_ moment: UInt64, within length: UInt64) -> Bool {
            moment < start || moment - start < length
        }
    }

    /// Windows kept before those already over are forgotten: bounds the memory of a run with endless new fingerprints.
    static let pruneAbove = 4096

    public init(_ limit: RateLimit) {
        self.limit = limit
    }

    /// Whether a stall of `fingerprint` detected at `now` (monotonic nanoseconds) gets a full report; counted either
    /// way. A moment before the window's start (stalls of two threads decided out of order) falls in the window.
    public mutating func admit(_ fingerprint: String, at now: UInt64) -> Bool {
        if var window = windows[fingerprint], window.contains(now, within: limit.windowNanoseconds) {
            let admitted = window.admitted < limit.count
            if admitted { window.admitted += 1 } else { window.suppressed += 1 }
            windows[fingerprint] = window
            return admitted
        }
        if windows.count >= Self.pruneAbove {
            windows = windows.filter { $0.value.contains(now, within: limit.windowNanoseconds) }
        }
        windows[fingerprint] = Window(start: now, admitted: 1, suppressed: 0)
        return true
    }

    /// A stall admitted at `moment` under `provisional` (its first sample's fingerprint) ended with the fingerprint
    /// `final`, which its report carries: its count moves there, so the full reports of a fingerprint are counted by
    /// the fingerprint the records show. Nothing moves when the two are equal.
    public mutating func recount(from provisional: String, to final: String, admittedAt moment: UInt64) {
        guard provisional != final else { return }
        if var window = windows[provisional], window.contains(moment, within: limit.windowNanoseconds),
            window.admitted > 0
        {
            window.admitted -= 1
            windows[provisional] = window
        }
        if var window = windows[final], window.contains(moment, within: limit.windowNanoseconds) {
            window.admitted += 1
            windows[final] = window
        } else {
            windows[final] = Window(start: moment, admitted: 1, suppressed: 0)
        }
    }

    /// The stalls of `fingerprint` not admitted in its current window so far.
    public func suppressed(_ fingerprint: String) -> Int { windows[fingerprint]?.suppressed ?? 0 }

    /// How many windows are remembered.
    var windowCount: Int { windows.count }
}
