// Preloading the agent must leave the workload as it was: its exceptions, its runtime, its streams.
import Foundation
import StallwatchTestSupport
import Testing

/// Compiles a small C or C++ program into a fresh temporary directory and returns the directory.
func compile(_ source: String, language: String, output: String, extraArguments: [String] = []) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let sourceFile = directory.appendingPathComponent(language == "c++" ? "program.cpp" : "program.c")
    try source.write(to: sourceFile, atomically: true, encoding: .utf8)
    let compiler = Process()
    compiler.executableURL = URL(fileURLWithPath: language == "c++" ? "/usr/bin/g++" : "/usr/bin/gcc")
    compiler.arguments = [sourceFile.path, "-o", directory.appendingPathComponent(output).path] + extraArguments
    compiler.currentDirectoryURL = directory
    try compiler.run()
    compiler.waitUntilExit()
    try #require(compiler.terminationStatus == 0, "compiling the test program failed")
    return directory
}

@Suite(.serialized) struct WorkloadSafetyTests {
    /// libunwind exports its own `_Unwind_*`; if the agent linked it, the workload's C++ exceptions would
    /// start unwinding through libunwind instead of libgcc_s.
    @Test func preloadingKeepsTheWorkloadsExceptionUnwinder() throws {
        let source = """
            #include <dlfcn.h>
            #include <stdio.h>
            #include <stdexcept>
            int main() {
                try { throw std::runtime_error("thrown"); }
                catch (const std::exception &error) {
                    Dl_info info;
                    dladdr(dlsym(RTLD_DEFAULT, "_Unwind_RaiseException"), &info);
                    printf("caught %s; _Unwind_RaiseException from %s\\n", error.what(), info.dli_fname);
                }
                return 0;
            }
            """
        let directory = try compile(source, language: "c++", output: "thrower", extraArguments: ["-ldl"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let program = directory.appendingPathComponent("thrower").path
        let bare = try standardOutput(of: program)
        #expect(bare.contains("libgcc_s"))
        let watched = try runStallwatch(["run", "--output", "/dev/null", "--", program])
        #expect(watched.status == 0)
        #expect(watched.stdout == bare, "same unwinder with the agent preloaded")
    }

    @Test func workloadBuiltWithAnotherSwiftRuntimeIsRefused() throws {
        let directory = try compile(
            "int swift_retain(void) { return 0; }", language: "c", output: "libswiftCore.so",
            extraArguments: ["-shared", "-fPIC"])
        defer { try? FileManager.default.removeItem(at: directory) }
        let program = directory.appendingPathComponent("other-runtime")
        let main = directory.appendingPathComponent("main.c")
        try "int swift_retain(void); int main(void) { return swift_retain(); }".write(
            to: main, atomically: true, encoding: .utf8)
        let linker = Process()
        linker.executableURL = URL(fileURLWithPath: "/usr/bin/gcc")
        linker.arguments = [
            main.path, "-o", program.path, "-L", directory.path, "-lswiftCore",
            "-Wl,-rpath," + directory.path,
        ]
        try linker.run()
        linker.waitUntilExit()
        try #require(linker.terminationStatus == 0)
        let result = try runStallwatch(["run", "--", program.path])
        #expect(result.status == 69)
        #expect(result.stderr.contains("uses the Swift runtime \(directory.path)/libswiftCore.so"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line")
    }

    @Test func stallStillInProgressWhenTheRunEndsIsWrittenUnfinished() throws {
        // A wrapper shell runs the demo (so the watched process is a grandchild), then kills it mid-stall.
        let script =
            "\(Products.demo) --scenario mutex --stalls 1 --duration 30s --period 40s & demo=$!; sleep 2; kill -9 $demo"
        let result = try runStallwatch(["run", "--format", "json", "--", "/bin/sh", "-c", script])
        #expect(result.status == 0, "the wrapper shell exits 0: \(result.stderr)")
        let stall = try #require(try result.stalls.first, "\(result.stdout)")
        #expect(stall.durationMs == .null)
        #expect(stall.unfinished == true)
        #expect(stall.symbols.contains { $0.contains("AccountStore.waitForAccountLock") })
        #expect(try result.summary?.unfinished == 1)
    }
}
