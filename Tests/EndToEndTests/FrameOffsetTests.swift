// Frames and thread states that tools can use: a non-PIE executable's offsets are what addr2line takes, and every
// system call has its name.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct FrameOffsetTests {
    static let source = """
        #include <pthread.h>
        #include <signal.h>
        #include <unistd.h>
        volatile unsigned long counter;
        __attribute__((noinline)) void park_main_thread(void) {
            sigset_t none;
            sigemptyset(&none);
            sigsuspend(&none);
        }
        __attribute__((noinline)) void *spin_forever(void *argument) {
            for (;;) counter++;
            return argument;
        }
        int main(void) {
            pthread_t thread;
            pthread_create(&thread, 0, spin_forever, 0);
            park_main_thread();
            return 0;
        }
        """

    /// What `addr2line -f -e IMAGE OFFSET` names.
    private func addr2line(_ image: String, _ offset: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/addr2line")
        process.arguments = ["-f", "-e", image, offset]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    @Test func aFixedAddressExecutablesOffsetsAreAddr2linesAndSyscallsAreNamed() throws {
        let directory = try compile(
            Self.source, language: "c", output: "parked", extraArguments: ["-g", "-O0", "-no-pie", "-pthread"])
        let program = directory.appendingPathComponent("parked").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        try process.run()
        defer {
            // SIGKILL: a child spawned from a test thread may inherit a mask that blocks SIGTERM.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        usleep(300_000)
        let result = try runStallwatch([
            "stack", "--all-threads", "--format", "json", String(process.processIdentifier),
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let stack = try #require(try result.records.first?.stack, "\(result.stdout)")
        let main = try #require(stack.threads.first { $0.main })
        #expect(main.threadState?.syscall == "rt_sigsuspend", "not a number: \(String(describing: main.threadState))")
        let parked = try #require(main.frames.first { $0.symbol == "park_main_thread" }, "\(main.frames)")
        let offset = try #require(parked.offset)
        #expect(parked.image == program)
        // A return address: addr2line names the function that holds it.
        #expect(try addr2line(program, offset) == "park_main_thread", "offset \(offset)")
        let spinner = try #require(
            stack.threads.first { thread in thread.frames.contains { $0.symbol == "spin_forever" } })
        if spinner.threadState?.state == "R" {
            #expect(spinner.threadState?.syscall == nil, "a running thread is in no system call")
        }
        let spinning = try #require(spinner.frames.first { $0.symbol == "spin_forever" })
        #expect(try addr2line(program, try #require(spinning.offset)) == "spin_forever")
    }
}
