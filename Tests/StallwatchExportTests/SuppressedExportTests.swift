// Records `--rate-limit` shortened (no samples) through every export: counted where stalls are counted, never a crash.
import StallwatchAggregate
import StallwatchTestSupport
import Testing

@testable import StallwatchExport

@Suite struct SuppressedExportTests {
    func collection() -> StallCollection {
        let short = { (id: Int) in
            RecordFixtures.stall(id: id, durationMs: 250, samples: [], extra: #","suppressed":true"#)
        }
        let text =
            [
                RecordFixtures.stall(id: 1, durationMs: 600), RecordFixtures.stall(id: 2, durationMs: 400), short(3),
                short(4), RecordFixtures.summary(stalls: 4),
            ].joined(separator: "\n") + "\n"
        var merger = StallMerger()
        NDJSONInput.read(bytes: Array(text.utf8), named: "limited.ndjson", into: &merger)
        return merger.finish()
    }

    @Test func everyFormatTakesThem() {
        for format in ExportFormat.allCases {
            #expect(!format.exporter().export(collection()).isEmpty, "\(format)")
        }
    }

    @Test func theSummaryCountsThemInTheirGroupAndSaysHowMany() {
        let summary = String(decoding: TextSummaryExporter().export(collection()), as: UTF8.self)
        #expect(summary.hasPrefix("4 stalls (1.5 s stalled)"), "\(summary)")
        #expect(summary.contains("4 stalls (2 shortened by --rate-limit): total 1.5 s"), "\(summary)")
    }

    @Test func stacksWeighOnlyWhatWasSampled() {
        let text = String(decoding: FoldedStacksExporter().export(collection()), as: UTF8.self)
        #expect(
            text
                == "[stack not kept: over --rate-limit] 500\n"
                + "__libc_start_main;main;CFRunLoopRunSpecific;Work.crunch() 1000\n")
    }
}
