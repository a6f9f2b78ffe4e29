// `--rate-limit` and `--rotate` on run, demo and attach: their values, their usage errors, and the rotation's plan and
// its renames on a real directory.
import Foundation
import StallwatchCore
import Testing

@testable import StallwatchCLI

@Suite struct RateLimitOptionTests {
    @Test func offUnlessGiven() {
        guard case .run(let options)? = invocation(["run", "--", "app"]) else { return }
        #expect(options.watch.settings.rateLimit == nil)
    }

    @Test func runDemoAndAttachTakeIt() {
        let hour = RateLimit(count: 2, windowNanoseconds: 3_600_000_000_000)
        if case .run(let options)? = invocation(["run", "--rate-limit", "2/1h", "--", "app"]) {
            #expect(options.watch.settings.rateLimit == hour)
        }
        if case .demo(let options)? = invocation(["demo", "--rate-limit=5/10m"]) {
            #expect(options.watch.settings.rateLimit == RateLimit(count: 5, windowNanoseconds: 600_000_000_000))
        }
        if case .attach(let options)? = invocation(["attach", "42", "--rate-limit", "2/1h"]) {
            #expect(options.watch.settings.rateLimit == hour)
        }
    }

    @Test(arguments: [
        ("0/10m", "the count and the window must be greater than zero"), ("5/0s", "greater than zero"),
        ("-1/10m", "must be positive"), ("5/10", "the window needs a unit (s, m, h or d)"),
        ("5", "expected N/DURATION"), ("5/10ms", "unknown unit 'ms'"),
    ])
    func badValuesAreOneUsageError(value: String, reason: String) {
        let error = usageError(["run", "--rate-limit", value, "--", "app"])
        #expect(error?.message.hasPrefix("The value '\(value)' is invalid for '--rate-limit <n/duration>': ") == true)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\n") == false)
        #expect(error?.topic == .run)
    }

    @Test func helpSaysItIsOffByDefaultAndOnInLibraryMode() {
        let help = HelpText.text(for: .run)
        #expect(help.contains("--rate-limit <n/duration>"))
        #expect(help.contains("default: off; library mode: 5/10m"))
        #expect(HelpText.text(for: .attach).contains("--rotate <size[,keep]>"))
    }
}

@Suite struct RotateOptionTests {
    @Test func sizeAndKeep() {
        guard case .run(let options)? = invocation(["run", "--output", "f", "--rotate", "10M,3", "--", "app"]) else {
            return
        }
        #expect(options.watch.rotation == OutputRotation(maxBytes: 10 << 20, keep: 3))
        guard case .attach(let attach)? = invocation(["attach", "--rotate", "64k", "42", "--output", "f"]) else {
            return
        }
        #expect(attach.watch.rotation == OutputRotation(maxBytes: 64 << 10, keep: OutputRotation.defaultKeep))
    }

    @Test(arguments: [
        ("1K", 1 << 10, 5), ("2G,1", 2 << 30, 1), ("512m,1000", 512 << 20, 1000), ("1024G", 1 << 40, 5),
    ])
    func readsSizes(text: String, bytes: Int, keep: Int) {
        #expect(OutputRotation.parse(text) == .success(OutputRotation(maxBytes: bytes, keep: keep)))
    }

    @Test(arguments: [
        ("0M", OutputRotation.Failure.zero), ("10", .missingUnit), ("10MB", .unknownUnit("MB")), ("-1M", .negative),
        ("10M,-2", .negative), ("10M,0", .keepZero), ("10M,", .keep), ("10M,x", .keep), ("10M,1001", .keep),
        ("10M,5,5", .shape), ("M", .shape), ("", .shape), ("1025G", .tooLarge), ("99999999999999G", .tooLarge),
    ])
    func refusesWhatIsNotARotation(text: String, failure: OutputRotation.Failure) {
        #expect(OutputRotation.parse(text) == .failure(failure))
    }

    @Test func badValuesAreOneUsageError() {
        let error = usageError(["run", "--output", "f", "--rotate", "10M,0", "--", "app"])
        #expect(error?.message.hasPrefix("The value '10M,0' is invalid for '--rotate <size[,keep]>': KEEP") == true)
        #expect(error?.message.contains("\n") == false)
    }

    @Test(arguments: [
        ["run", "--rotate", "1M", "--", "app"], ["run", "--rotate", "1M", "--output", "-", "--", "app"],
        ["demo", "--rotate", "1M"], ["attach", "--rotate", "1M", "42"],
    ])
    func withoutAnOutputFileIsAUsageError(arguments: [String]) {
        #expect(usageError(arguments)?.message.hasPrefix("--rotate rotates the --output file") == true)
    }

    @Test func rotatesOnlyBetweenRecordsOfANonEmptyFile() {
        let rotation = OutputRotation(maxBytes: 100, keep: 2)
        #expect(!rotation.rotatesBefore(recordBytes: 60, currentBytes: 40))
        #expect(rotation.rotatesBefore(recordBytes: 61, currentBytes: 40))
        #expect(!rotation.rotatesBefore(recordBytes: 500, currentBytes: 0), "a big record gets a file of its own")
    }

    @Test func renamesOldestFirstAndTheCurrentFileLast() {
        let renames = OutputRotation(maxBytes: 100, keep: 3).renames(of: "/d/out")
        #expect(renames.map(\.from) == ["/d/out.2", "/d/out.1", "/d/out"])
        #expect(renames.map(\.to) == ["/d/out.3", "/d/out.2", "/d/out.1"])
        #expect(OutputRotation(maxBytes: 100, keep: 1).renames(of: "o").map(\.to) == ["o.1"])
    }
}

@Suite struct RotatingFileTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-rotate-\(UUID())").path

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func contents(_ name: String) -> String? { try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) }

    @Test func recordsStayWholeAndOnlyKeepRotatedFilesRemain() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/out.ndjson"
        let file = try RotatingFile(path: path, rotation: OutputRotation(maxBytes: 1024, keep: 2))
        var warnings: [String] = []
        // 400-byte records: two fit in 1 KiB, the third starts a new file.
        for index in 0..<7 {
            let record = Array(("\(index)" + String(repeating: "x", count: 398) + "\n").utf8)
            try file.write(record) { warnings.append($0) }
        }
        file.close()
        #expect(warnings.isEmpty)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["out.ndjson", "out.ndjson.1", "out.ndjson.2"], "the oldest file, records 0 and 1, is gone")
        #expect(contents("out.ndjson.2")?.split(separator: "\n").map(\.first) == ["2", "3"])
        #expect(contents("out.ndjson.1")?.split(separator: "\n").map(\.first) == ["4", "5"])
        #expect(contents("out.ndjson")?.split(separator: "\n").map(\.first) == ["6"])
        for name in names { #expect(contents(name)?.hasSuffix("\n") == true, "\(name) ends with a whole record") }
    }

    @Test func anExistingFileCountsTowardsItsSize() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/out.ndjson"
        try String(repeating: "y", count: 1019).appending("\n").write(toFile: path, atomically: false, encoding: .utf8)
        let file = try RotatingFile(path: path, rotation: OutputRotation(maxBytes: 1024, keep: 5))
        try file.write(Array("new record\n".utf8)) { _ in }
        file.close()
        #expect(contents("out.ndjson") == "new record\n")
        #expect(contents("out.ndjson.1")?.count == 1020)
    }

    @Test func aFailedRotationSaysSoOnceAndKeepsTheRecords() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/out.ndjson"
        let file = try RotatingFile(path: path, rotation: OutputRotation(maxBytes: 1024, keep: 1))
        // A directory where out.ndjson.1 would go: renaming a file over it fails.
        try FileManager.default.createDirectory(atPath: path + ".1/sub", withIntermediateDirectories: true)
        var warnings: [String] = []
        for _ in 0..<4 {
            try file.write(Array((String(repeating: "z", count: 599) + "\n").utf8)) { warnings.append($0) }
        }
        file.close()
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.hasPrefix("cannot rotate --output '\(path)'") == true)
        #expect(contents("out.ndjson")?.count == 2400, "every record is in the file")
    }

    @Test func aFIFOCannotBeRotated() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fifo"
        #expect(mkfifo(path, 0o600) == 0)
        // Opened for reading too, so that opening it for writing does not wait for a reader.
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        #expect(throws: StallwatchError.self) { try RotatingFile(path: path, rotation: OutputRotation(maxBytes: 1024)) }
    }
}
