// The parsers of untrusted input, each as a fuzz target: what a workload, its files, its agent or a user can hand
// stallwatch. A target must return for any bytes: a trap, a crash or a hang is a bug.
import CStallwatchElf
import CStallwatchSystem
import FoundationEssentials
import Glibc
import StallwatchAggregate
import StallwatchCLI
import StallwatchCore
import StallwatchExport
import StallwatchImages
import StallwatchMetrics
import StallwatchSymbols

/// One parser under fuzzing.
enum FuzzTarget: String, CaseIterable {
    /// The built-in DWARF reader over sections split out of the input (see ``sections(_:)``).
    case dwarf
    /// A whole ELF file: the symbol table reader (libelf) and the DWARF reader over its sections.
    case elf
    /// The agent's messages as the collector decodes them, and the busy periods they carry.
    case agentMessage = "agent-message"
    /// The collector's answers as the agent decodes them.
    case collectorMessage = "collector-message"
    /// The attach request as a listening agent decodes and checks it.
    case attachRequest = "attach-request"
    /// An image snapshot sent by the agent.
    case imageMap = "image-map"
    /// A process's `/proc/PID/maps` (its paths are the process's choice).
    case procMaps = "proc-maps"
    /// A JSON-lines report read as `--baseline`.
    case baseline
    /// NDJSON reports as `stallwatch report` reads them, merged and written in every format.
    case report
    /// A command line: arguments separated by NUL bytes.
    case arguments
    /// A duration option's value.
    case duration
    /// A request to the metrics endpoint (anyone who reaches its port sends one), and a `--metrics` address.
    case metricsRequest = "metrics-request"

    /// The DWARF section names, in the order the `dwarf` target's input holds them.
    static let sectionNames = [
        ".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str", ".debug_str_offsets",
        ".debug_addr", ".debug_ranges", ".debug_rnglists",
    ]
    /// What separates the sections in the `dwarf` target's input.
    static let separator = Array("\u{0}SECTION\u{0}".utf8)
    /// Addresses looked up in fuzzed DWARF: low ones, where hand-made and small programs' code is.
    static let probes: [UInt64] = [0, 0x1000, 0x1010, 0x1139, 0x4000, 0x10_0000]

    /// Runs the parser over `bytes`.
    func run(_ bytes: [UInt8]) {
        switch self {
        case .dwarf:
            let parts = Self.sections(bytes)
            parts.withUnsafeSections { sections in
                guard let reader = try? DwarfReader(sections: sections) else { return }
                _ = try? reader.locations(for: Self.probes)
            }
        case .elf:
            Self.readELF(bytes)
        case .agentMessage:
            guard let message = WireFormat.decode(AgentMessage.self, from: bytes) else { return }
            if case .busyPeriods(_, let buckets, let longest) = message {
                var histogram = LatencyHistogram(sparse: buckets)
                histogram.exactMaximum = longest
                _ = (histogram.total, histogram.maximum, histogram.percentile(99.9), histogram.count(atLeast: 1))
            }
            if case .stallBegan(let pid, let tid, let onset) = message {
                let report = StallReport(
                    identifier: onset.identifier, pid: pid, tid: tid, processName: "", phase: onset.phase,
                    start: onset.start, end: onset.detectedAt, detectedAt: onset.detectedAt,
                    thresholdNanoseconds: 80_000_000, count: 3, captureMethod: .ptrace, samples: [])
                _ = (
                    report.duration, report.length(), report.watcherLateness, report.confidenceNote, report.fingerprint
                )
            }
        case .collectorMessage:
            _ = WireFormat.decode(CollectorMessage.self, from: bytes)
        case .attachRequest:
            _ = WireFormat.decode(AttachRequest.self, from: bytes)?.settings.invalidSetting
        case .imageMap:
            if let images = ProcessImages(encoded: bytes) {
                for address in Self.probes + [UInt64.max, UInt64.max - 1] { _ = images.image(containing: address) }
            }
        case .procMaps:
            for mapped in ProcMapsLines.executableFiles(in: bytes) { _ = (mapped.path, mapped.base) }
            _ = ProcMapsLines.ending(with: "[vdso]", in: bytes).map(ProcMapsLines.range(of:))
        case .baseline:
            _ = BaselineFile.fingerprints(inReport: bytes)
        case .report:
            var merger = StallMerger()
            // A line limit and chunks small enough for inputs of libFuzzer's size to reach lines that span reads
            // and lines skipped for their length.
            NDJSONInput.read(bytes: bytes, named: "fuzz", into: &merger, longestLine: 1 << 14, chunkSize: 509)
            let collection = merger.finish()
            _ = collection.sources.map(\.warning)
            for format in ExportFormat.allCases { _ = format.exporter().export(collection) }
        case .arguments:
            let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            _ = ArgumentParser.parse(arguments)
        case .duration:
            _ = DurationParser.parse(String(decoding: bytes, as: UTF8.self))
        case .metricsRequest:
            let head = MetricsHTTP.headEnd(in: bytes).map { Array(bytes[..<$0]) } ?? bytes
            _ = MetricsHTTP.response(toHead: head) { "stallwatch_watched_threads 1\n" }.bytes
            _ = MetricsAddress.parse(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// The `dwarf` target's input cut at each ``separator`` into sections, in ``sectionNames`` order.
    static func sections(_ bytes: [UInt8]) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var rest = bytes[...]
        while parts.count < sectionNames.count - 1, let at = rest.firstRange(of: separator) {
            parts.append(Array(rest[..<at.lowerBound]))
            rest = rest[at.upperBound...]
        }
        parts.append(Array(rest))
        return parts
    }

    /// The input as an ELF file, read the way the collector reads an image.
    static func readELF(_ bytes: [UInt8]) {
        let descriptor = bytes.withUnsafeBytes { sw_memory_file($0.baseAddress, UInt($0.count)) }
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard let symbols = sw_symbols_open("/proc/self/fd/\(descriptor)") else { return }
        defer { sw_symbols_close(symbols) }
        var names = [UnsafePointer<CChar>?](repeating: nil, count: probes.count)
        sw_symbols_name(symbols, probes, probes.count, &names)
        _ = (sw_symbols_has_debug_info(symbols), sw_symbols_link_base(symbols))
        let sections = DwarfSections { name in
            var size = 0
            guard let start = sw_symbols_section(symbols, name, &size) else { return nil }
            return UnsafeRawBufferPointer(start: start, count: size)
        }
        if let reader = try? DwarfReader(sections: sections) { _ = try? reader.locations(for: probes) }
    }
}

extension [[UInt8]] {
    /// The parts as DWARF sections, valid inside `body`.
    func withUnsafeSections(_ body: (DwarfSections) -> Void) {
        // Contiguous copies that outlive the closure's use of their pointers.
        let buffers = map { part -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(part.count, 1), alignment: 8)
            buffer.copyBytes(from: part)
            return UnsafeMutableRawBufferPointer(rebasing: buffer[..<part.count])
        }
        defer { for buffer in buffers { buffer.deallocate() } }
        let sections = DwarfSections { name in
            guard let index = FuzzTarget.sectionNames.firstIndex(of: name), index < buffers.count else { return nil }
            return UnsafeRawBufferPointer(buffers[index])
        }
        body(sections)
    }
}
