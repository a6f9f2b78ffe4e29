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
        let program = try RunningProgram(directory.appendingPathComponent("spinner").path)
        usleep(300_000)
        return try mainThread(of: program.pid)
    }

    /// The main thread's stack, as `stallwatch stack` shows it.
    private func mainThread(of pid: Int32) throws -> StackThreadRecord {
        let result = try runStallwatch(["stack", "--format", "json", String(pid)])
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

    /// `framed` keeps a frame pointer but has no unwind rule at all (written in assembly without CFI directives, as
    /// swiftc emits some merged functions, e.g. libFoundationEssentials' `Date.timeIntervalSinceReferenceDate`
    /// getter); its caller keeps none and has rules. libunwind's guess for `framed` put the caller's stack pointer
    /// beside the real one, and the caller's rules then read a heap pointer as its return address; the frame
    /// pointer gives the right one, as eu-stack and gdb find it.
    static let framePointerWithoutRules = """
        #include <unistd.h>
        volatile unsigned long counter;
        __attribute__((noinline)) void inner_tick(void) { for (int i = 0; i < 100000000; i++) counter++; }
        void framed(void);
        __asm__(".text\\n.globl framed\\n.type framed,@function\\nframed:\\n"
                "push %rbp\\nmov %rsp,%rbp\\nsub $32,%rsp\\ncall inner_tick\\nleave\\nret\\n.size framed,.-framed\\n");
        __attribute__((noinline)) void caller_without_frame_pointer(void) {
            volatile char padding[72];
            for (;;) { framed(); padding[counter % 72] = 1; }
        }
        int main(void) { caller_without_frame_pointer(); return 0; }
        """

    @Test func aFramePointerFunctionWithoutRulesIsSteppedByItsFramePointer() throws {
        let directory = try compile(
            Self.framePointerWithoutRules, language: "c", output: "framed",
            extraArguments: ["-O2", "-fomit-frame-pointer"])
        let program = try RunningProgram(directory.appendingPathComponent("framed").path)
        usleep(300_000)
        // Several looks: the thread must be caught in inner_tick, below the frame without rules.
        var seen: [[String]] = []
        for _ in 0..<5 {
            let main = try mainThread(of: program.pid)
            let symbols = main.frames.compactMap(\.symbol)
            seen.append(symbols)
            guard symbols.first == "inner_tick" else { continue }
            #expect(
                symbols.starts(with: ["inner_tick", "framed", "caller_without_frame_pointer", "main"]), "\(symbols)")
            #expect(symbols.last == "_start", "\(symbols)")
            #expect(main.error == nil, "\(main.error ?? "")")
            return
        }
        Issue.record("never caught in inner_tick: \(seen)")
    }

    @Test func aStackCutShortSaysWhereAndWhy() throws {
        let main = try mainThread(builtWith: Self.noUnwindTables + ["-g0"])
        #expect(main.frames.first?.symbol == "inner_work")
        let error = try #require(main.error, "a stack that ends before _start says so: \(main.frames)")
        #expect(error.contains("cut short after inner_work"), "\(error)")
        #expect(error.contains("no unwind rule"), "\(error)")
    }
}
