// DurationParser: the accepted notation, every rejected form, and formatting back.

import StallwatchCLI
import StallwatchCollector
import StallwatchCore
import Testing

@Suite struct DurationParserTests {
    @Test(arguments: [
        ("80ms", Duration.milliseconds(80)),
        ("0.5s", .milliseconds(500)),
        ("250us", .microseconds(250)),
        ("1.5s", .milliseconds(1500)),
        ("1s", .seconds(1)),
        (".5s", .milliseconds(500)),
        ("007ms", .milliseconds(7)),
        ("0.001ms", .microseconds(1)),
        ("0.000001ms", .nanoseconds(1)),
        ("1.25ms", .microseconds(1250)),
        ("250µs", .microseconds(250)),
        ("250μs", .microseconds(250)),
        ("3600s", .seconds(3600)),
        ("3600000ms", .seconds(3600)),
    ])
    func acceptsNumberWithUnit(text: String, expected: Duration) {
        #expect(DurationParser.parse(text) == .success(expected))
    }

    @Test func convertsDecimalsExactlyWithoutFloatingPoint() {
        // 0.1 + 0.2 style rounding would make this 0.30000000000000004s.
        #expect(DurationParser.parse("0.3s") == .success(.milliseconds(300)))
        #expect(DurationParser.parse("0.000000001s") == .success(.nanoseconds(1)))
    }

    @Test(arguments: ["80", "0.08", "5"])
    func rejectsNumberWithoutUnit(text: String) throws {
        let failure = try #require(DurationParser.parse(text).failure)
        #expect(failure == .missingUnit)
        #expect(failure.description.contains("write 80ms or 0.08s"))
    }

    @Test(arguments: [("80h", "h"), ("5m", "m"), ("80min", "min"), ("80ns", "ns"), ("80MS", "MS")])
    func rejectsUnknownUnit(text: String, unit: String) throws {
        let failure = try #require(DurationParser.parse(text).failure)
        #expect(failure == .unknownUnit(unit))
        #expect(failure.description == "unknown unit '\(unit)'; use us, ms or s")
    }

    @Test(arguments: ["0ms", "0s", "0.0s", "000us", "0.0000000000000000001s"])
    func rejectsZero(text: String) {
        #expect(DurationParser.parse(text).failure == .zero)
    }

    @Test(arguments: ["-80ms", "-1s", "-0.5s", "-0ms"])
    func rejectsNegative(text: String) {
        #expect(DurationParser.parse(text).failure == .negative)
    }

    /// Found by the fuzzer: each dash was one level of recursion, and 200,000 of them overflowed the stack.
    @Test func manyDashesAreOneSign() {
        #expect(DurationParser.parse("---80ms").failure == .negative)
        #expect(DurationParser.parse(String(repeating: "-", count: 200_000) + "5ms").failure == .negative)
        #expect(DurationParser.parse("--").failure == .notANumber)
    }

    @Test(arguments: [
        "abc", "ms", "1.2.3ms", "..ms", "1e3ms", "80 ms", " 80ms", "+80ms", "-", "-abc", "0x10ms", "80ms!",
    ])
    func rejectsGarbage(text: String) {
        #expect(DurationParser.parse(text).failure == .notANumber)
    }

    @Test func rejectsEmpty() {
        #expect(DurationParser.parse("").failure == .empty)
    }

    @Test(arguments: ["nan", "NaNms", "inf", "infs", "Infinity", "+infms"])
    func rejectsNonFinite(text: String) {
        #expect(DurationParser.parse(text).failure == .notFinite)
    }

    @Test(arguments: ["3600.000001s", "3601s", "61000000ms", "99999999999999999999999999999s", "4000000000us"])
    func rejectsMoreThanAnHour(text: String) {
        #expect(DurationParser.parse(text).failure == .tooLarge)
    }

    @Test func everyFailureExplainsItself() {
        let failures: [DurationParser.Failure] = [
            .empty, .notANumber, .missingUnit, .unknownUnit("h"), .notFinite, .negative, .zero, .tooLarge,
        ]
        for failure in failures {
            #expect(!failure.description.isEmpty)
            #expect(!failure.description.hasSuffix("."), "descriptions end a sentence the caller starts")
        }
        #expect(DurationParser.Failure.tooLarge.description.contains("1 hour"))
        #expect(DurationParser.Failure.negative.description.contains("positive"))
    }

    @Test(arguments: [
        (Duration.milliseconds(80), "80ms"),
        (.milliseconds(1500), "1.5s"),
        (.seconds(2), "2s"),
        (.microseconds(250), "250us"),
        (.microseconds(1250), "1.25ms"),
        (.microseconds(1_234_567), "1234.567ms"),
        (.nanoseconds(500), "0.5us"),
    ])
    func formatsInTheNotationItParses(duration: Duration, text: String) {
        #expect(DurationParser.format(duration) == text)
        #expect(DurationParser.parse(text) == .success(duration))
    }
}

extension Result {
    /// The failure, or `nil` on success.
    var failure: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
