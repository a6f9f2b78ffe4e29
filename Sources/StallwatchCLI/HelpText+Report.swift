// The help page of `stallwatch report`.
import StallwatchCore

extension HelpText {
    static let reportHelp = page(
        overview: ArgumentDefinitions.reportAbstract,
        discussion: [
            """
            Reads any number of --format json reports (schema version 2 and later; '-' reads stdin) from any \
            runs, processes and hosts, merges their stalls by fingerprint, and writes one output: by default \
            a text summary, one block per fingerprint with its count, stalled time (total, p50, p95, max), \
            first and last seen, runs, hosts and culprit; then stalled time by what the threads waited for \
            (locks by holder, child processes, pipes and sockets by peer) and every deadlock.
            """,
            """
            A line that cannot be used (cut short, not JSON, an unknown event or key, a newer schema) is \
            skipped or read as far as it goes, with one warning per file naming the lines. A file without \
            any stallwatch record is an error (exit \(ExitCode.noRecords)); the other files are still reported.
            """,
        ],
        usage: usageLine(for: .report),
        sections: [
            UsageLayout.section(
                "ARGUMENTS", rows: [("<file> ...", "NDJSON reports (stallwatch run --format json); '-' is stdin.")]),
            optionsSection(for: .report),
            UsageLayout.section(
                "ENVIRONMENT",
                rows: [
                    (
                        "STALLWATCH_HOST",
                        "The host key of the records run, demo and attach write (default: the host name), by which"
                            + " report tells machines apart."
                    )
                ]),
            examplesSection([
                "stallwatch report run1.ndjson run2.ndjson",
                "stallwatch report --html stalls.html *.ndjson",
                "stallwatch report --format pprof --output stalls.pb.gz *.ndjson",
                "stallwatch report --format folded *.ndjson | flamegraph.pl > stalls.svg",
                "stallwatch report --format speedscope --output stalls.speedscope.json *.ndjson",
                "stallwatch report --format trace --output trace.json *.ndjson",
            ]),
        ]
    )
}
