// Reads and writes durations such as `80ms`, `0.5s` and `250us` for the command line.

/// Parses the durations options such as `--threshold` take, and formats durations the same way.
///
/// A duration is a positive decimal number immediately followed by a unit: `us` (also `µs`),
/// `ms` or `s`. It is converted exactly, without going through floating point, and may be at
/// most one hour.
public enum DurationParser {
    /// The longest duration accepted.
    public static let maximum: Duration = .seconds(3600)

    /// Why a text is not a duration. Its `description` completes a sentence such as
    /// "The value '80' is invalid for '--threshold <duration>': ...".
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The text is empty.
        case empty
        /// The text is not a decimal number followed by a unit.
        case notANumber
        /// A number without a unit, such as `80`.
        case missingUnit
        /// A number followed by something other than `us`, `ms` or `s`.
        case unknownUnit(String)
        /// `nan`, `inf` and the like.
        case notFinite
        /// A negative number.
        case negative
        /// Zero, or a duration shorter than an attosecond.
        case zero
        /// More than ``DurationParser/maximum``.
        case tooLarge

        public var description: String {
            switch self {
            case .empty:
                "expected a number with a unit (us, ms or s), such as 80ms"
            case .notANumber:
                "expected a number with a unit (us, ms or s), such as 80ms"
            case .missingUnit:
                "the number needs a unit (us, ms or s); write 80ms or 0.08s"
            case .unknownUnit(let unit):
                "unknown unit '\(unit)'; use us, ms or s"
            case .notFinite:
                "expected a finite number with a unit, such as 80ms"
            case .negative:
                "the duration must be positive"
            case .zero:
                "the duration must be greater than zero"
            case .tooLarge:
                "the duration must be at most 1 hour (3600s)"
            }
        }
    }

    /// Parses a duration such as `80ms`, `0.5s` or `250us`.
    ///
    /// - Parameter text: The text exactly as the user typed it; surrounding spaces are not allowed.
    /// - Returns: The duration, or why `text` is not one.
    public static func parse(_ text: String) -> Result<Duration, Failure> {
        guard !text.isEmpty else { return .failure(.empty) }
        if text.hasPrefix("-") {
            // One sign, however many dashes: the magnitude is parsed once, not once per dash (a fuzzer's 3,000
            // dashes overflowed the stack).
            let magnitude = String(text.drop { $0 == "-" })
            return magnitude.isEmpty ? .failure(.notANumber) : negativeFailure(for: magnitude)
        }
        let numberEnd = text.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? text.endIndex
        let number = text[..<numberEnd]
        let unit = String(text[numberEnd...])
        if number.isEmpty {
            return .failure(looksNonFinite(text) ? .notFinite : .notANumber)
        }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.contains(where: { !$0.isEmpty }) else { return .failure(.notANumber) }
        guard !unit.isEmpty else { return .failure(.missingUnit) }
        guard let attosecondsPerUnit = attosecondsPerUnit[unit] else {
            return .failure(unit.allSatisfy(\.isLetter) ? .unknownUnit(unit) : .notANumber)
        }
        let wholeDigits = parts[0].drop { $0 == "0" }
        // 20 digits of seconds is far beyond the maximum, and keeps the arithmetic below in range.
        guard wholeDigits.count <= 20 else { return .failure(.tooLarge) }
        let whole = Int128(wholeDigits) ?? 0
        let fractionDigits = parts.count == 2 ? parts[1].prefix(18) : ""
        var fraction: Int128 = 0
        if let digits = Int128(fractionDigits) {
            fraction = digits * attosecondsPerUnit / power(of: 10, fractionDigits.count)
        }
        let attoseconds = whole * attosecondsPerUnit + fraction
        guard attoseconds > 0 else { return .failure(.zero) }
        guard attoseconds <= maximum.attoseconds else { return .failure(.tooLarge) }
        return .success(Duration(attoseconds: attoseconds))
    }

    /// Formats a duration in the notation ``parse(_:)`` reads, in the largest unit that keeps the
    /// number short: `80ms`, `1.5s`, `250us`.
    ///
    /// Parts below a nanosecond are dropped.
    public static func format(_ duration: Duration) -> String {
        let nanoseconds = duration.attoseconds / 1_000_000_000
        let sign = nanoseconds < 0 ? "-" : ""
        let magnitude = nanoseconds.magnitude
        for (unit, nanosecondsPerUnit) in [("s", UInt128(1_000_000_000)), ("ms", 1_000_000)]
        where magnitude >= nanosecondsPerUnit && magnitude % (nanosecondsPerUnit / 1000) == 0 {
            return sign + decimal(magnitude, per: nanosecondsPerUnit) + unit
        }
        return sign + decimal(magnitude, per: 1000) + "us"
    }

    private static let attosecondsPerUnit: [String: Int128] = [
        "us": 1_000_000_000_000,
        "µs": 1_000_000_000_000,  // U+00B5 MICRO SIGN
        "μs": 1_000_000_000_000,  // U+03BC GREEK SMALL LETTER MU
        "ms": 1_000_000_000_000_000,
        "s": 1_000_000_000_000_000_000,
    ]

    /// Classifies a text that starts with `-`: a negative duration if the rest reads as one.
    private static func negativeFailure(for magnitude: String) -> Result<Duration, Failure> {
        switch parse(magnitude) {
        case .success, .failure(.zero), .failure(.tooLarge):
            .failure(.negative)
        case .failure(.empty):
            .failure(.notANumber)
        case .failure(let failure):
            .failure(failure)
        }
    }

    private static func looksNonFinite(_ text: String) -> Bool {
        let lowercased = text.lowercased().drop { $0 == "+" }
        return lowercased.hasPrefix("nan") || lowercased.hasPrefix("inf")
    }

    private static func power(of base: Int128, _ exponent: Int) -> Int128 {
        (0..<exponent).reduce(1) { result, _ in result * base }
    }

    /// `value / divisor` in decimal notation, without trailing zeros in the fraction.
    private static func decimal(_ value: UInt128, per divisor: UInt128) -> String {
        let whole = String(value / divisor)
        var remainder = value % divisor
        guard remainder != 0 else { return whole }
        var digits = ""
        var scale = divisor / 10
        while remainder != 0, scale != 0 {
            digits.append(String(remainder / scale))
            remainder %= scale
            scale /= 10
        }
        return whole + "." + digits
    }
}
