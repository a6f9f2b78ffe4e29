// Symbolication of real optimized and unoptimized Swift and C code: names, file:line, inlined frames.
import Foundation
import StallwatchCore
import StallwatchImages
import StallwatchSymbols
import StallwatchTestSupport
import StallwatchUnwind
import Testing

/// Builds a one-file program into a temporary directory with the given compiler and flags.
func buildProgram(source: String, fileName: String, compiler: [String]) throws -> String {
    let directory = NSTemporaryDirectory() + "stallwatch-symbols-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let sourcePath = directory + "/" + fileName
    try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
    let binary = directory + "/program"
    let build = try TargetProcess(compiler + [sourcePath, "-o", binary])
    let status = build.wait()
    try #require(status == 0, "\(compiler) failed")
    return binary
}

/// A Swift program that spins in `crunch`, which the optimizer inlines into `Spinner.spinForever()`.
let swiftSpinner = """
    @inline(__always) func crunch(_ seed: UInt64) -> UInt64 {
        var state = seed
        while state != 42 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
        }
        return state
    }

    enum Spinner {
        @inline(never) static func spinForever(_ seed: UInt64) -> UInt64 {
            crunch(seed) &+ 1
        }
    }

    print(Spinner.spinForever(UInt64(CommandLine.arguments.count)))
    """

/// A C program that spins in `spin_forever`.
let cSpinner = """
    #include <stdio.h>
    __attribute__((noinline)) static unsigned long spin_forever(unsigned long state) {
        while (state != 42) {
            state = state * 6364136223846793005UL + 1442695040888963407UL;
        }
        return state;
    }
    int main(int argc, char **argv) {
        printf("%lu\\n", spin_forever((unsigned long)argc));
        return 0;
    }
    """

/// The ways stallwatch names frames.
enum SymbolicatorKind: String, CaseIterable, Sendable {
    /// The CLI's: symbol tables and DWARF read in process, then the toolchain's `Runtime` module.
    case cli
    /// The CLI's with `STALLWATCH_SYMBOLIZER` naming an `llvm-symbolizer`, which then reads all DWARF.
    case llvmSymbolizer
    /// The agent's: the toolchain's `Runtime` module alone.
    case runtime

    func make() -> Symbolicator {
        switch self {
        case .cli:
            return CollectorSymbolicator.make(environment: [:])
        case .llvmSymbolizer:
            // The test must exercise llvm-symbolizer, not silently fall back: the toolchain running the tests has one.
            let found = LLVMSymbolizer.locate(environment: [:])
            #expect(found != nil, "llvm-symbolizer next to the Swift runtime")
            return CollectorSymbolicator.make(environment: [LLVMSymbolizer.environmentVariable: found ?? ""])
        case .runtime:
            return Symbolicator()
        }
    }
}

/// Captures the spinning program's main thread a few times and returns the symbolicated frames.
func symbolicatedSamples(of binary: String, count: Int = 5, by kind: SymbolicatorKind = .cli) throws -> [[Frame]] {
    let target = try TargetProcess([binary])
    defer { target.stop() }
    #expect(target.awaitExec(of: binary))
    usleep(200_000)
    let sampler = RemoteStackSampler()
    var samples: [[Frame]] = []
    for _ in 0..<count {
        let stack = try sampler.capture(pid: target.pid, tid: target.pid)
        let images = ProcessImages.captureWithToolchainMap(pid: target.pid)
        samples.append(kind.make().symbolicate(stack.addresses, images: images))
        usleep(20_000)
    }
    return samples
}

@Suite(.serialized) struct SourceLocationTests {
    @Test(arguments: ["-Onone", "-O"], SymbolicatorKind.allCases)
    func swiftFramesHaveDemangledNamesAndLines(optimization: String, kind: SymbolicatorKind) throws {
        let binary = try buildProgram(
            source: swiftSpinner, fileName: "Spinner.swift",
            compiler: ["/usr/bin/env", "swiftc", optimization, "-g"])
        let samples = try symbolicatedSamples(of: binary, by: kind)
        let spinner = samples.compactMap { $0.first { $0.symbol?.contains("Spinner.spinForever") == true } }
        #expect(spinner.count == samples.count, "every sample is inside Spinner.spinForever: \(samples.first ?? [])")
        // Every sample names the file; code the compiler generated (line 0) may lack a line.
        #expect(spinner.allSatisfy { $0.file?.hasSuffix("Spinner.swift") == true })
        #expect(spinner.contains { ($0.line ?? 0) > 0 })
        #expect(spinner.allSatisfy { !($0.symbol ?? "").hasPrefix("$s") }, "demangled")
        if optimization == "-O" {
            // crunch() is inlined into spinForever: it appears as an inlined frame at the same address.
            let inlined = samples.flatMap { $0 }.filter { $0.inlined && $0.symbol?.contains("crunch") == true }
            #expect(
                !inlined.isEmpty,
                "inlined frames: \(samples.first.map { $0.map { ($0.symbol ?? "?", $0.inlined, $0.line ?? 0) } } ?? [])"
            )
        }
    }

    @Test(arguments: ["-O0", "-O2"], SymbolicatorKind.allCases)
    func cFramesHaveLines(optimization: String, kind: SymbolicatorKind) throws {
        let binary = try buildProgram(
            source: cSpinner, fileName: "spinner.c", compiler: ["/usr/bin/cc", optimization, "-g"])
        let samples = try symbolicatedSamples(of: binary, by: kind)
        for frames in samples {
            let spin = try #require(frames.first { $0.symbol == "spin_forever" }, "\(frames)")
            #expect(spin.file?.hasSuffix("spinner.c") == true)
            #expect((spin.line ?? 0) >= 3 && (spin.line ?? 0) <= 6, "line \(spin.line ?? 0)")
            #expect(frames.contains { $0.symbol == "main" })
        }
    }

    /// Without DWARF, names come from the symbol table, local (static) functions included.
    @Test func binaryWithoutDebugInfoIsNamedFromItsSymbolTable() throws {
        let binary = try buildProgram(source: cSpinner, fileName: "spinner.c", compiler: ["/usr/bin/cc", "-O1"])
        let samples = try symbolicatedSamples(of: binary, count: 3)
        for frames in samples {
            let spin = try #require(frames.first { $0.symbol == "spin_forever" }, "\(frames)")
            #expect(spin.file == nil && spin.line == nil)
            #expect(frames.contains { $0.symbol == "main" })
            #expect(frames.contains { $0.symbol == "_start" })
        }
    }

    /// A program linked at a fixed address (`-no-pie`), which the toolchain's image map leaves out: the CLI names it
    /// from its symbol table, or with its lines when it has DWARF.
    @Test(arguments: [true, false])
    func nonPositionIndependentProgramIsNamed(withDebugInfo: Bool) throws {
        let binary = try buildProgram(
            source: cSpinner, fileName: "spinner.c",
            compiler: ["/usr/bin/cc", "-O1", "-no-pie"] + (withDebugInfo ? ["-g"] : []))
        let samples = try symbolicatedSamples(of: binary, count: 3)
        for frames in samples {
            let spin = try #require(frames.first { $0.symbol == "spin_forever" }, "\(frames)")
            #expect(spin.image == binary)
            if withDebugInfo {
                #expect(spin.file?.hasSuffix("spinner.c") == true && (spin.line ?? 0) >= 3 && (spin.line ?? 0) <= 6)
            }
            #expect(frames.contains { $0.symbol == "main" })
        }
    }
}
