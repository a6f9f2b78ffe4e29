// `stallwatch report` on the command line, and `--html`/`--export` on `run`, `demo` and `attach`.
import Foundation
import StallwatchExport
import Testing

@testable import StallwatchCLI

@Suite struct ReportParserTests {
    @Test func filesAndOptionsInAnyOrder() {
        let parsed = invocation(["report", "a.ndjson", "--format", "pprof", "b.ndjson", "--output=p.pb.gz", "-"])
        #expect(
            parsed == .report(ReportOptions(inputs: ["a.ndjson", "b.ndjson", "-"], format: .pprof, output: "p.pb.gz")))
    }

    @Test func textToStdoutByDefault() {
        guard case .report(let options)? = invocation(["report", "run.ndjson"]) else { return }
        #expect(options.primary == ExportRequest(format: .text, path: "-"))
    }

    @Test func onlyTheExportsWhenOnlyExportsAreAskedFor() {
        guard case .report(let options)? = invocation(["report", "--html", "s.html", "--export", "folded=f.txt", "x"])
        else { return }
        #expect(options.primary == nil)
        #expect(
            options.exports == [
                ExportRequest(format: .html, path: "s.html"), ExportRequest(format: .folded, path: "f.txt"),
            ])
    }

    @Test func afterTheTerminatorEverythingIsAFile() {
        #expect(
            invocation(["report", "--", "--odd-name", "-x"]) == .report(ReportOptions(inputs: ["--odd-name", "-x"])))
    }

    @Test func mistakesAreUsageErrors() {
        #expect(usageError(["report"])?.message == "Missing expected argument '<file> ...'")
        #expect(usageError(["report", "-", "-"])?.message == "Standard input ('-') can be read only once")
        #expect(usageError(["report", "--format", "svg", "x"])?.message.contains("  - speedscope") == true)
        #expect(usageError(["report", "--export", "pprof", "x"])?.message.contains("expected <format>=<file>") == true)
        #expect(usageError(["report", "--export", "gif=a", "x"])?.message.contains("unknown format 'gif'") == true)
        #expect(
            usageError(["report", "--frmat", "text", "x"])?.message
                == "Unknown option '--frmat'. Did you mean '--format'?")
    }

    @Test func runDemoAndAttachTakeExports() {
        guard case .run(let run)? = invocation(["run", "--html", "s.html", "--export", "trace=t.json", "--", "ls"]),
            case .attach(let attach)? = invocation(["attach", "--export", "pprof=p.pb.gz", "42"]),
            case .demo(let demo)? = invocation(["demo", "--html", "d.html"])
        else { return }
        #expect(run.watch.exports.map(\.format) == [.html, .trace])
        #expect(attach.watch.exports == [ExportRequest(format: .pprof, path: "p.pb.gz")])
        #expect(demo.watch.exports == [ExportRequest(format: .html, path: "d.html")])
    }

    @Test func helpForReport() {
        #expect(invocation(["report", "--help"]) == .help(.report))
        #expect(invocation(["help", "report"]) == .help(.report))
        #expect(HelpText.text(for: .root).contains("  report "))
    }
}
