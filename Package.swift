// swift-tools-version:6.0
// stallwatch: finds main-run-loop stalls in Linux Swift programs and says why.
import PackageDescription

let package = Package(
    name: "stallwatch",
    products: [
        .executable(name: "stallwatch", targets: ["stallwatch"]),
        .executable(name: "stallwatch-demo", targets: ["stallwatch-demo"]),
        .executable(name: "stallwatch-bench", targets: ["stallwatch-bench"]),
        // Injected with LD_PRELOAD by `stallwatch run`; also linkable by apps that start the monitor themselves.
        .library(name: "StallwatchAgent", type: .dynamic, targets: ["StallwatchAgent"]),
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
            dependencies: ["CLibunwind"],
            linkerSettings: [.linkedLibrary("lzma")]
        ),
        // The agent's C half: load-time constructor and the async-signal-safe in-process stack capture.
        // It never links libunwind (that would interpose _Unwind_* in the workload); it dlopens it locally.
        .target(
            name: "CStallwatchAgentSupport",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // Function names from ELF symbol tables with elfutils' libelf (Debian's libelf-dev), for the CLI only.
        .target(name: "CStallwatchElf", linkerSettings: [.linkedLibrary("elf")]),
        // Linux calls that Swift cannot make through its Glibc module (signalfd, prctl, dladdr on the vDSO).
        .target(name: "CStallwatchSystem"),
        .target(name: "StallwatchCore"),
        .target(
            name: "StallwatchAgent",
            dependencies: ["StallwatchCore", "StallwatchSymbols", "CStallwatchAgentSupport"]
        ),
        .target(
            name: "StallwatchUnwind",
            dependencies: ["StallwatchCore", "CStallwatchUnwind"]
        ),
        .target(name: "StallwatchSymbols", dependencies: ["StallwatchCore", "CStallwatchSystem"]),
        .target(name: "StallwatchReport", dependencies: ["StallwatchCore"]),
        .target(
            name: "StallwatchCLI",
            dependencies: [
                "StallwatchCore", "StallwatchUnwind", "StallwatchSymbols", "StallwatchReport", "CStallwatchSystem",
                "CStallwatchElf",
            ]
        ),
        // The Swift runtime and FoundationEssentials linked in: binding ~20 shared libraries took 4 of the 7 ms a
        // `stallwatch stack` spent starting. FoundationEssentials' two helper libraries are not linked by
        // -static-stdlib itself. The agent stays dynamic: it must share the workload's runtime.
        .executableTarget(
            name: "stallwatch", dependencies: ["StallwatchCLI"],
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"])]
        ),
        .executableTarget(name: "stallwatch-demo", dependencies: ["CStallwatchSystem"]),
        // Benchmarks (Scripts/bench): workloads with throughput counters and the measuring driver.
        .executableTarget(
            name: "stallwatch-bench",
            dependencies: [
                "StallwatchCore", "StallwatchUnwind", "StallwatchSymbols", "StallwatchCLI", "CStallwatchSystem",
            ]
        ),
        .testTarget(name: "StallwatchCoreTests", dependencies: ["StallwatchCore"]),
        .testTarget(name: "StallwatchCLITests", dependencies: ["StallwatchCLI"]),
        .testTarget(
            name: "StallwatchReportTests",
            dependencies: ["StallwatchReport", "StallwatchCore", "StallwatchTestSupport"]
        ),
        .testTarget(
            name: "StallwatchUnwindTests",
            dependencies: ["StallwatchUnwind", "StallwatchSymbols", "StallwatchCLI", "CStallwatchAgentSupport"]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["StallwatchCore", "StallwatchTestSupport"]),
        // Decodable types for stallwatch's JSON records, shared by the report and end-to-end tests.
        .target(name: "StallwatchTestSupport", path: "Tests/StallwatchTestSupport"),
    ]
)
