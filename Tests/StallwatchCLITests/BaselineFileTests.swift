// --baseline names a file the user chose, which may be anything: a device without an end, a huge log.
import Foundation
import Testing

@testable import StallwatchCLI

@Suite struct BaselineFileTests {
    @Test func aFileWithoutAnEndIsRefusedNotReadForEver() {
        #expect(throws: BaselineFile.Failure.tooLarge(path: "/dev/zero")) {
            try BaselineFile.fingerprints(at: "/dev/zero")
        }
    }

    @Test func overlongLinesAreSkippedAndTheRestIsRead() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("baseline-\(UUID().uuidString)").path
        defer { unlink(path) }
        let long =
            "{\"event\":\"stall\",\"fingerprint\":\"" + String(repeating: "a", count: BaselineFile.longestLine) + "\"}"
        let text = [long, "{\"event\":\"stall\",\"fingerprint\":\"00ff00ff00ff00ff\"}", "{\"event\":\"summary\"}"]
        try text.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        #expect(try BaselineFile.fingerprints(at: path) == ["00ff00ff00ff00ff"])
    }

    @Test func aByteOrderMarkBeforeTheFirstRecordIsSkipped() {
        let text = "\u{FEFF}{\"event\":\"stall\",\"fingerprint\":\"00ff00ff00ff00ff\"}\n{\"event\":\"summary\"}"
        #expect(BaselineFile.fingerprints(inReport: Array(text.utf8)) == ["00ff00ff00ff00ff"])
    }

    /// A stall `--rate-limit` shortened has no samples and a fingerprint like any other: it is known to the baseline.
    @Test func shortenedStallsAreKnownByTheirFingerprint() {
        let text = [
            #"{"event":"stall-detected","schemaVersion":2,"id":1,"fingerprint":"1111111111111111","samples":[]}"#,
            #"{"event":"stall","schemaVersion":2,"id":1,"durationMs":250,"suppressed":true,"#
                + #""fingerprint":"1111111111111111","culprit":null,"samples":[]}"#,
            #"{"event":"summary","schemaVersion":2,"stalls":1,"suppressed":1}"#,
        ]
        #expect(BaselineFile.fingerprints(inReport: Array(text.joined(separator: "\n").utf8)) == ["1111111111111111"])
    }
}
