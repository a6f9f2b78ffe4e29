// The C activity board: it packs the word and buckets busy periods as StallwatchCore reads them, and its publish path,
// which runs at every observed run-loop transition, calls nothing but the clock.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@Suite struct ActivityBoardTests {
    @Test func aPublishedTransitionUnpacksToItsPhaseModeAndTime() throws {
        let board = try #require(sw_board_create(0))
        defer { sw_board_destroy(board) }
        var words: Set<UInt64> = []
        for phase in [LoopPhase.entry, .afterWaiting, .beforeSources, .beforeWaiting, .sleeping, .outsideLoop] {
            let before = sw_agent_now_ns()
            sw_board_publish(board, phase.rawValue, 9, 1)
            let after = sw_agent_now_ns()
            let word = sw_board_read(board)
            words.insert(word)
            let snapshot = PackedActivity.unpack(word, now: after)
            #expect(snapshot.phase == phase)
            #expect(snapshot.mode == 9)
            #expect(snapshot.timestamp >= before / 1000 * 1000 && snapshot.timestamp <= after)
        }
        #expect(words.count == 6, "every transition changes the word")
    }

    @Test func theEndProbeHoldsTheNextTransitionsTime() throws {
        let board = try #require(sw_board_create(0))
        defer { sw_board_destroy(board) }
        sw_board_publish(board, LoopPhase.afterWaiting.rawValue, 0, 1)
        sw_board_arm_end_probe(board)
        #expect(sw_board_end_probe(board) == 0)
        let before = sw_agent_now_ns()
        sw_board_publish(board, LoopPhase.beforeSources.rawValue, 0, 0)
        let probe = sw_board_end_probe(board)
        #expect(probe >= before && probe <= sw_agent_now_ns(), "the precise time, even after a coarse stamp")
    }

    @Test func busyPeriodsRunFromWakingToSleepingInLatencyHistogramBuckets() throws {
        let board = try #require(sw_board_create(1))
        defer { sw_board_destroy(board) }
        sw_board_publish(board, LoopPhase.afterWaiting.rawValue, 0, 1)
        usleep(2000)
        sw_board_publish(board, LoopPhase.sleeping.rawValue, 0, 1)
        let longest = sw_board_longest_busy_period(board)
        #expect(longest >= 2_000_000)
        let bucket = LatencyHistogram.index(forNanoseconds: longest)
        #expect(sw_board_busy_periods(board, Int32(bucket)) == 1)
        #expect((0..<LatencyHistogram.bucketCount).map { sw_board_busy_periods(board, Int32($0)) }.reduce(0, +) == 1)
    }

    /// The board starts a busy period at exactly the phases StallwatchCore calls busy (its own copy of `isBusy`).
    @Test(arguments: LoopPhase.allCases.filter { $0 != .sleeping && $0 != .notStarted })
    func aBusyPeriodStartsAtEveryBusyPhaseAndNoOther(phase: LoopPhase) throws {
        let board = try #require(sw_board_create(1))
        defer { sw_board_destroy(board) }
        sw_board_publish(board, phase.rawValue, 0, 1)
        usleep(100)
        sw_board_publish(board, LoopPhase.sleeping.rawValue, 0, 1)
        let counted = (0..<LatencyHistogram.bucketCount).map { sw_board_busy_periods(board, Int32($0)) }.reduce(0, +)
        #expect(counted == (phase.isBusy ? 1 : 0), "\(phase)")
    }

    @Test func busyBucketsAreLatencyHistogramsBuckets() {
        var value: UInt64 = 0
        while value < 1 << 62 {
            for nanoseconds in [value, value + 999, value + 1000, value * 3 / 2] {
                #expect(Int(sw_board_busy_bucket(nanoseconds)) == LatencyHistogram.index(forNanoseconds: nanoseconds))
            }
            value = value < 1000 ? value + 250 : value * 2 + 7
        }
    }

    /// The hot path as the machine runs it: `sw_board_publish`'s code in the binary this test runs (the agent's C
    /// half is linked into it as into libStallwatchAgent.so), disassembled. Any call but the clock's (a helper no
    /// longer inlined, a runtime call) fails here.
    @Test func publishingCallsNothingButTheClock() throws {
        let path = try #require(sw_agent_library_path().map { String(cString: $0) }, "where the agent's C code is")
        let disassembler = try #require(
            Self.onPath("llvm-objdump") ?? Self.onPath("objdump"), "llvm-objdump (the toolchain's) or objdump")
        let symbol = "sw_board_publish"
        let option =
            disassembler.hasSuffix("llvm-objdump") ? "--disassemble-symbols=\(symbol)" : "--disassemble=\(symbol)"
        let listing = try standardOutput(of: disassembler, ["-d", "--no-show-raw-insn", option, path])
        // Instruction lines: an address, a colon, the instruction.
        let lines: [String] = listing.split(whereSeparator: \.isNewline).map(String.init)
        let instructions = lines.filter { line in
            let address = line.drop { $0 == " " }.prefix { $0 != ":" }
            return !address.isEmpty && address.allSatisfy(\.isHexDigit) && line.count > address.count + 2
        }
        #expect(instructions.count > 10, "no code found for \(symbol) in \(path):\n\(listing)")
        #expect(instructions.contains { $0.contains("ret") })
        // A sanitized build's instrumentation (every load and store checked) is the sanitizer's, not the code's.
        let instrumentation = ["<__asan", "<__tsan", "<__ubsan", "<__sanitizer", "<__msan"]
        let calls = instructions.filter { line in
            let mnemonic = Self.mnemonic(of: line)
            let isCall = mnemonic.hasPrefix("call") || (mnemonic.hasPrefix("jmp") && !line.contains("<\(symbol)"))
            return isCall && !instrumentation.contains { line.contains($0) }
        }
        let allowed = calls.filter { $0.contains("<clock_gettime") }
        #expect(!allowed.isEmpty, "the clock is read")
        #expect(calls.count == allowed.count, "\(symbol) calls more than the clock:\n\(calls.joined(separator: "\n"))")
    }

    /// The instruction's name in a disassembler's line (`  5e4d2:  \tcallq\t0x5bcb0 <clock_gettime@plt>`).
    private static func mnemonic(of line: String) -> Substring {
        let instruction = line.drop { $0 != ":" }.dropFirst().drop { $0 == " " || $0 == "\t" }
        return instruction.prefix { $0 != " " && $0 != "\t" }
    }

    private static func onPath(_ tool: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        return directories.map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

}
