// Stacks through code whose unwind rules are only in .debug_frame, and stacks cut short that say so.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct DebugFrameTests {
    static let source = """
        #include <unistd.h>
        volatile unsigned long counter;
        __attribute__((noinline)) void inner_work(void) {
            for (;;) { counter++; if (counter % 1000000000 == 0) usleep(1); }
        }
        __attribute__((noinline)) void middle_layer(void) { inner_work(); counter++; }
        __attribute__((noinline)) void outer_call(void) { middle_layer(); counter++; }
        int main(void) { outer_call(); return 0; }
        """

    private func mainThread(builtWith flags: [String]) throws -> StackThreadRecord {
        let directory = try compile(Self.source, language: "c", output: "spinner", extraArguments: flags)
        let process = Process()
        process.executableURL = directory.appendingPathComponent("spinner")
        try process.run()
        defer {
            // SIGKILL: a child spawned from a test thread may inherit a mask that blocks SIGTERM.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        usleep(300_000)
        let result = try runStallwatch(["stack", "--format", "json", String(process.processIdentifier)])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stack = try #require(try result.records.first?.stack, "\(result.stdout)")
        return try #require(stack.threads.first { $0.main })
    }

    static let noUnwindTables = [
        "-O2", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fomit-frame-pointer",
    ]

    @Test(arguments: [["-g"], ["-g", "-no-pie"]])
    func unwindsThroughDebugFrameRules(extra: [String]) throws {
        let main = try mainThread(builtWith: Self.noUnwindTables + extra)
        let symbols = main.frames.compactMap(\.symbol)
        #expect(
            symbols.starts(with: ["inner_work", "middle_layer", "outer_call", "main"]), "\(symbols)")
        #expect(symbols.last == "_start", "\(symbols)")
        #expect(main.error == nil)
    }

    @Test func aStackCutShortSaysWhereAndWhy() throws {
        let main = try mainThread(builtWith: Self.noUnwindTables + ["-g0"])
        #expect(main.frames.first?.symbol == "inner_work")
        let error = try #require(main.error, "a stack that ends before _start says so: \(main.frames)")
        #expect(error.contains("cut short after inner_work"), "\(error)")
        #expect(error.contains("no unwind rule"), "\(error)")
    }
}
