// swift-tools-version:6.0
// stallwatch: finds main-run-loop stalls in Linux Swift programs and says why.
import Foundation
import PackageDescription

/// `Scripts/sanitize` links stallwatch with the shared Swift runtime: the sanitizers' allocators and a runtime linked
/// into the executable disagree (TSan's allocator check fails; ASan calls the Runtime module's frees of its own
/// demangled names bad).
let sharedRuntime = ProcessInfo.processInfo.environment["STALLWATCH_SHARED_RUNTIME"] == "1"

let package = Package(
    name: "stallwatch",
    products: [
        .executable(name: "stallwatch", targets: ["stallwatch"]),
        .executable(name: "stallwatch-demo", targets: ["stallwatch-demo"]),
        .executable(name: "stallwatch-bench", targets: ["stallwatch-bench"]),
        // Injected with LD_PRELOAD by `stallwatch run`; also linkable by apps that start the monitor themselves. An app
        // that imports StallwatchReport too encodes reports as `run`'s JSON records, from the same library: a second,
        // static copy of StallwatchCore in the app would give it two of every type.
        .library(name: "StallwatchAgent", type: .dynamic, targets: ["StallwatchAgent", "StallwatchReport"]),
    ],
    targets: [
        // libunwind (with its ptrace and generic remote unwinders) from Debian's libunwind-dev.
        .systemLibrary(
            name: "CLibunwind",
            pkgConfig: "libunwind-ptrace",
            providers: [.apt(["libunwind-dev"])]
        ),
        // Remote (ptrace) unwinding: unw_* are C macros, so every libunwind call lives here.
        .target(
            name: "CStallwatchUnwind",
            dependencies: ["CLibunwind", "CStallwatchLoopModel"],
            linkerSettings: [.linkedLibrary("lzma")]
        ),
        // The agent's C half: the load hook, the stand-ins for CoreFoundation's run loop and libdispatch (originals
        // found one way), the activity boards and their publishers, and the async-signal-safe in-process capture.
        // It never links libunwind (that would interpose _Unwind_* in the workload); it dlopens it locally.
        .target(
            name: "CStallwatchAgentSupport",
            dependencies: ["CStallwatchLoopModel"],
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // The loop model in C (header only), defined once for both languages: phases and which are busy, the packed
        // activity word, the histogram's buckets, the run-loop nesting model, what the observers' activities move it
        // to, and the capture rules both captures share. Core reads it; the agent's C hot path inlines it.
        .target(name: "CStallwatchLoopModel"),
        // Function names from ELF symbol tables with elfutils' libelf (Debian's libelf-dev), for the collector only.
        .target(name: "CStallwatchElf", linkerSettings: [.linkedLibrary("elf")]),
        // The kernel trace source: the BPF program that follows watched threads in and out of their loop's waits
        // (bpf/, built into the committed loop_trace.bpf.o by Scripts/build-trace-program), loaded with Debian's
        // libbpf (libbpf-dev).
        .target(
            name: "CStallwatchTrace", exclude: ["bpf", "loop_trace.bpf.o"], linkerSettings: [.linkedLibrary("bpf")]
        ),
        // Linux calls that Swift cannot make through its Glibc module (signalfd, prctl, dladdr on the vDSO).
        .target(name: "CStallwatchSystem"),
        // Errno-returning system calls as typed errors, and posix_spawn set up the way every child needs.
        .target(name: "StallwatchSystem", dependencies: ["CStallwatchSystem"]),
        // Value types and pure logic: settings, the stall detector, reports and what they are built from.
        .target(name: "StallwatchCore", dependencies: ["CStallwatchLoopModel"]),
        // In the workload: run-loop observers, the watcher thread, in-process capture. Links only the image map and
        // the in-process symbolicator, never the readers of target files.
        .target(
            name: "StallwatchAgent",
            dependencies: [
                "StallwatchCore", "StallwatchImages", "StallwatchSystem", "StallwatchMetrics",
                "CStallwatchAgentSupport",
                "CStallwatchSystem",
            ]
        ),
        // Capture: a thread's stack from another process with ptrace and libunwind.
        .target(
            name: "StallwatchUnwind",
            dependencies: ["CStallwatchUnwind"]
        ),
        // What is mapped where in a process, and the symbolicator engine with the toolchain's in-process source.
        .target(name: "StallwatchImages", dependencies: ["StallwatchCore", "CStallwatchSystem"]),
        // The readers of a target's files, used out of the agent: ELF symbol tables, DWARF, llvm-symbolizer.
        .target(
            name: "StallwatchSymbols",
            dependencies: ["StallwatchCore", "StallwatchImages", "StallwatchSystem", "CStallwatchElf"]
        ),
        // The engine: launching or attaching, the poll loop, capturing and naming stalls, one-shot stacks.
        .target(
            name: "StallwatchCollector",
            dependencies: [
                "StallwatchCore", "StallwatchSystem", "StallwatchUnwind", "StallwatchImages", "StallwatchSymbols",
                "StallwatchMetrics", "CStallwatchSystem", "CStallwatchTrace",
            ]
        ),
        // Prometheus metrics (`--metrics`, `STALLWATCH_METRICS`): the numbers, their text exposition, and the small
        // HTTP endpoint that serves it from a thread of its own.
        .target(name: "StallwatchMetrics", dependencies: ["StallwatchCore", "CStallwatchSystem"]),
        // Rendering: text, JSON lines and JUnit, from the report model only.
        .target(name: "StallwatchReport", dependencies: ["StallwatchCore"]),
        // Reading any number of NDJSON reports and merging their stalls by fingerprint (`stallwatch report`).
        .target(name: "StallwatchAggregate", dependencies: ["StallwatchCore"]),
        // gzip for the pprof export, with Debian's zlib (zlib1g-dev).
        .target(name: "CStallwatchZlib", linkerSettings: [.linkedLibrary("z")]),
        // The formats `stallwatch report` writes from merged stalls: text, folded, speedscope, trace, pprof, HTML.
        .target(
            name: "StallwatchExport",
            dependencies: ["StallwatchAggregate", "StallwatchReport", "StallwatchCore", "CStallwatchZlib"]
        ),
        // The command line: parsing, help, dispatch, and where reports are written.
        .target(
            name: "StallwatchCLI",
            dependencies: [
                "StallwatchCore", "StallwatchSystem", "StallwatchCollector", "StallwatchReport", "StallwatchAggregate",
                "StallwatchExport", "StallwatchMetrics",
            ]
        ),
        // The Swift runtime and FoundationEssentials linked in: binding ~20 shared libraries took 4 of the 7 ms a
        // `stallwatch stack` spent starting. FoundationEssentials' two helper libraries are not linked by
        // -static-stdlib itself. The agent stays dynamic: it must share the workload's runtime.
        .executableTarget(
            name: "stallwatch", dependencies: ["StallwatchCLI"],
            linkerSettings: sharedRuntime
                ? [] : [.unsafeFlags(["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"])]
        ),
        .executableTarget(name: "stallwatch-demo", dependencies: ["StallwatchCore", "CStallwatchSystem"]),
        // Benchmarks (Scripts/bench): workloads with throughput counters and the measuring driver.
        .executableTarget(
            name: "stallwatch-bench",
            dependencies: [
                "StallwatchSystem", "StallwatchUnwind", "StallwatchImages", "StallwatchSymbols", "StallwatchMetrics",
                "CStallwatchSystem",
            ]
        ),
        // The capture bench's library-mode app: it links the agent and starts the monitor itself.
        .executableTarget(name: "stallwatch-bench-app", dependencies: ["StallwatchAgent"]),
        // What several test targets share: child processes to capture, the Decodable types of the JSON records.
        .target(
            name: "StallwatchTestSupport", dependencies: ["StallwatchCore", "StallwatchMetrics"],
            path: "Tests/StallwatchTestSupport"
        ),
        // The parsers of untrusted input as libFuzzer targets (Scripts/fuzz), or, built plainly, a replay of their
        // seed corpora and regressions (Scripts/test).
        .executableTarget(
            name: "stallwatch-fuzz",
            dependencies: [
                "StallwatchCLI", "StallwatchCore", "StallwatchImages", "StallwatchSymbols", "StallwatchAggregate",
                "StallwatchExport", "StallwatchMetrics", "CStallwatchElf", "CStallwatchSystem",
            ]
        ),
        .testTarget(name: "StallwatchCoreTests", dependencies: ["StallwatchCore"]),
        .testTarget(name: "StallwatchMetricsTests", dependencies: ["StallwatchMetrics", "StallwatchCore"]),
        .testTarget(
            name: "StallwatchCLITests", dependencies: ["StallwatchCLI", "StallwatchCollector", "StallwatchMetrics"]
        ),
        .testTarget(
            name: "StallwatchCollectorTests",
            dependencies: ["StallwatchCollector", "StallwatchCore", "StallwatchTestSupport"]
        ),
        .testTarget(
            name: "StallwatchReportTests",
            dependencies: ["StallwatchReport", "StallwatchCore", "StallwatchTestSupport"]
        ),
        .testTarget(
            name: "StallwatchUnwindTests",
            dependencies: ["StallwatchUnwind", "StallwatchCore", "StallwatchTestSupport"]
        ),
        .testTarget(
            name: "StallwatchAgentTests",
            dependencies: [
                "CStallwatchAgentSupport", "StallwatchAgent", "StallwatchCore", "StallwatchImages",
                "StallwatchTestSupport",
                "CStallwatchSystem",
            ]
        ),
        .testTarget(
            name: "StallwatchSymbolsTests",
            dependencies: [
                "StallwatchSymbols", "StallwatchImages", "StallwatchUnwind", "StallwatchCore", "CStallwatchElf",
                "StallwatchTestSupport",
            ]
        ),
        .testTarget(
            name: "StallwatchAggregateTests",
            dependencies: ["StallwatchAggregate", "StallwatchReport", "StallwatchCore", "StallwatchTestSupport"]
        ),
        .testTarget(
            name: "StallwatchExportTests",
            dependencies: ["StallwatchExport", "StallwatchAggregate", "StallwatchCore", "StallwatchTestSupport"]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["StallwatchCore", "StallwatchTestSupport"]),
    ]
)
