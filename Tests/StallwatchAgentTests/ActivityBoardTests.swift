// The C activity board: it packs the word and buckets busy periods as StallwatchCore reads them, and its publish path,
// which runs at every observed run-loop transition, calls nothing but the clock.
import CStallwatchAgentSupport
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@Suite struct ActivityBoardTests {
    /// Both board clocks: the time-stamp counter (where the kernel keeps time by it, as here) and CLOCK_MONOTONIC.
    static let clocks: [Int32] = [1, 0]

    /// What a stamp may be off by: its low 10 bits are dropped (1.024 µs on CLOCK_MONOTONIC, 1,024 counter ticks), and
    /// the counter's conversion adds the jitter of a pair of clock reads.
    static let stampSlack: UInt64 = 20_000

    /// Publishes `phase` between two readings of CLOCK_MONOTONIC; returns when the transition may be said to have
    /// happened: between them, widened by `slack` either way.
    private static func publish(
        _ board: OpaquePointer, _ phase: LoopPhase, mode: UInt8 = 0, precise: Int32 = 1, slack: UInt64 = stampSlack
    ) -> ClosedRange<UInt64> {
        let before = sw_agent_now_ns()
        sw_board_publish(board, phase.rawValue, mode, precise)
        let after = sw_agent_now_ns()
        return (before - slack)...(after + slack)
    }

    @Test func theCounterIsTheClockWhereTheKernelKeepsTimeByIt() throws {
        let clocksource = try? String(
            contentsOfFile: "/sys/devices/system/clocksource/clocksource0/current_clocksource", encoding: .utf8)
        let kernelUsesCounter = clocksource?.trimmingCharacters(in: .whitespacesAndNewlines) == "tsc"
        #expect((sw_board_clock_uses_counter() != 0) == kernelUsesCounter)
        let board = try #require(sw_board_create(0))
        defer { sw_board_destroy(board) }
        #expect((sw_board_uses_counter(board) != 0) == kernelUsesCounter)
    }

    @Test(arguments: clocks)
    func aPublishedTransitionReadsBackAsItsPhaseModeAndTime(counter: Int32) throws {
        let board = try #require(sw_board_create_on_clock(0, counter))
        defer { sw_board_destroy(board) }
        var words: Set<UInt64> = []
        for phase in [LoopPhase.entry, .afterWaiting, .beforeSources, .beforeWaiting, .sleeping, .outsideLoop] {
            let window = Self.publish(board, phase, mode: 9)
            var timestamp: UInt64 = 0
            let word = sw_board_read(board, &timestamp)
            words.insert(word)
            let snapshot = PackedActivity.unpack(word, timestamp: timestamp)
            #expect(snapshot.phase == phase)
            #expect(snapshot.mode == 9)
            #expect(window.contains(timestamp), "\(phase)")
        }
        #expect(words.count == 6, "every transition changes the word")
    }

    /// A stall's start is read long after it was stamped: the counter's stamp still reads as its CLOCK_MONOTONIC time.
    @Test(arguments: clocks)
    func aStampReadLongAfterKeepsItsTime(counter: Int32) throws {
        let board = try #require(sw_board_create_on_clock(0, counter))
        defer { sw_board_destroy(board) }
        let window = Self.publish(board, .afterWaiting)
        usleep(300_000)
        var timestamp: UInt64 = 0
        _ = sw_board_read(board, &timestamp)
        #expect(window.contains(timestamp))
    }

    @Test func aStampIsRecoveredAcrossTheWrapOfItsPackedBits() {
        let range: UInt64 = 1 << 56
        let stamp = 3 * range - 2_000  // shortly before a wrap of the packed bits
        let packed = stamp & (range - 1)
        #expect(sw_board_unwrap_stamp(packed, stamp + 10_000) == stamp, "read after the wrap")
        #expect(sw_board_unwrap_stamp(packed, stamp) == stamp)
    }

    /// The loop thread may publish between the reader's clock read and its load of the word: the stamp is then a
    /// little after the reader's `now`, and must stay that time, not fall a whole wrap back (or to 0).
    @Test func aStampJustAfterTheReadersClockIsKept() {
        let now: UInt64 = 21_438_013_000_000
        #expect(sw_board_unwrap_stamp(now + 25_000, now) == now + 25_000)
    }

    /// Two transitions in the same tick of a coarse clock still make two words.
    @Test(arguments: clocks)
    func everyTransitionChangesTheWordOnEitherClock(counter: Int32) throws {
        let board = try #require(sw_board_create_on_clock(0, counter))
        defer { sw_board_destroy(board) }
        var words: Set<UInt64> = []
        for _ in 0..<1000 {
            sw_board_publish(board, LoopPhase.beforeSources.rawValue, 0, 0)
            words.insert(sw_board_read(board, nil))
        }
        #expect(words.count == 1000)
    }

    @Test(arguments: clocks)
    func theEndProbeHoldsTheNextTransitionsTime(counter: Int32) throws {
        let board = try #require(sw_board_create_on_clock(0, counter))
        defer { sw_board_destroy(board) }
        sw_board_publish(board, LoopPhase.afterWaiting.rawValue, 0, 1)
        sw_board_arm_end_probe(board)
        #expect(sw_board_end_probe(board) == 0)
        let window = Self.publish(board, .beforeSources, precise: 0, slack: 1_000)
        usleep(100_000)
        let probe = sw_board_end_probe(board)
        #expect(window.contains(probe), "the precise time, even after a coarse stamp")
    }

    @Test(arguments: clocks)
    func busyPeriodsRunFromWakingToSleepingInLatencyHistogramBuckets(counter: Int32) throws {
        let board = try #require(sw_board_create_on_clock(1, counter))
        defer { sw_board_destroy(board) }
        let start = sw_agent_now_ns()
        sw_board_publish(board, LoopPhase.afterWaiting.rawValue, 0, 1)
        usleep(2000)
        sw_board_publish(board, LoopPhase.sleeping.rawValue, 0, 1)
        let elapsed = sw_agent_now_ns() - start
        let longest = sw_board_longest_busy_period(board)
        #expect(longest >= 2_000_000 - Self.stampSlack && longest <= elapsed + Self.stampSlack)
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

    /// The hot path as the machine runs it, in the binary this test runs (the agent's C half is linked into it as into
    /// libStallwatchAgent.so), disassembled once (a few seconds on a debug test binary, which would otherwise hold
    /// up other tests' threads several times over):
    ///
    /// - `sw_board_publish` reads the time-stamp counter itself, and its only calls are the board's rare paths, out of
    ///   line: the CLOCK_MONOTONIC stamp (where the counter is not usable), the end probe's record (once per stall)
    ///   and the count of a busy period (once per sleep). Any other call (a helper no longer inlined, a runtime call)
    ///   fails here.
    /// - The main loop's run hooks (inside the agent's `CFRunLoopRunSpecific`) and observer call-outs publish in C:
    ///   none calls into Swift, whose runtime (exclusivity checks, retains, lazy globals) would come with it, and the
    ///   run hooks and the nesting model are inlined. The only ways into Swift are the mode-naming callbacks, through
    ///   function pointers, for a mode not seen last.
    @Test func theHotPathsCallNothingButTheirRarePaths() throws {
        let runPaths = ["CFRunLoopRunSpecific", "sw_main_loop_first_observer", "sw_main_loop_last_observer"]
        let listings = try Self.instructions(of: ["sw_board_publish"] + runPaths)
        let publish = listings["sw_board_publish"] ?? []
        let standIn = listings["CFRunLoopRunSpecific"] ?? []
        #if arch(x86_64)
            #expect(publish.contains { Self.mnemonic(of: $0) == "rdtsc" }, "the counter is read inline")
            #expect(
                standIn.filter { Self.mnemonic(of: $0) == "rdtsc" }.count >= 2,
                "a run's entry and exit read the counter inline")
        #endif
        let rarePaths = ["<sw_board_publish_slowly", "<sw_board_count_busy_period"]
        let calls = Self.calls(in: publish, of: "sw_board_publish")
        let other = calls.filter { call in !rarePaths.contains { call.contains($0) } }
        #expect(!calls.isEmpty, "the rare paths are out of line")
        #expect(other.isEmpty, "sw_board_publish calls more:\n\(other.joined(separator: "\n"))")
        for symbol in runPaths {
            let calls = Self.calls(in: listings[symbol] ?? [], of: symbol)
            let swift = calls.filter { $0.contains("<$s") || $0.contains("<swift_") }
            #expect(swift.isEmpty, "\(symbol) calls Swift:\n\(swift.joined(separator: "\n"))")
            #expect(
                !calls.contains { $0.contains("<sw_main_run_") || $0.contains("<sw_nesting_") },
                "\(symbol): the run hooks and the nesting model are inlined:\n\(calls.joined(separator: "\n"))")
        }
        // The stand-in calls CoreFoundation's run (through a pointer) and, directly, only its rare paths.
        let standInRarePaths =
            rarePaths + [
                "<sw_main_entry_state_asked", "<sw_main_first_run_returned", "<main_run_slowly", "<other_thread_run",
            ]
        let direct = Self.calls(in: standIn, of: "CFRunLoopRunSpecific").filter { $0.contains("<") }
        let unexpected = direct.filter { call in !standInRarePaths.contains { call.contains($0) } }
        #expect(unexpected.isEmpty, "CFRunLoopRunSpecific calls more:\n\(unexpected.joined(separator: "\n"))")
    }

    /// The instruction lines of each symbol's code in the agent's C.
    private static func instructions(of symbols: [String]) throws -> [String: [String]] {
        let path = try #require(sw_agent_library_path().map { String(cString: $0) }, "where the agent's C code is")
        let disassembler = try #require(
            onPath("llvm-objdump") ?? onPath("objdump"), "llvm-objdump (the toolchain's) or objdump")
        // llvm-objdump takes every symbol at once; GNU objdump one at a time.
        let options =
            disassembler.hasSuffix("llvm-objdump")
            ? [["--disassemble-symbols=" + symbols.joined(separator: ",")]] : symbols.map { ["--disassemble=\($0)"] }
        var listing = ""
        for option in options {
            listing += try standardOutput(of: disassembler, ["-d", "--no-show-raw-insn"] + option + [path])
        }
        // A symbol's code follows its header line (`000000000004e930 <CFRunLoopRunSpecific>:`); instruction lines
        // are an address, a colon, the instruction.
        var found: [String: [String]] = [:]
        var current: String?
        for line in listing.split(whereSeparator: \.isNewline).map(String.init) {
            if line.hasSuffix(">:"), let open = line.firstIndex(of: "<") {
                current = String(line[line.index(after: open)..<line.index(line.endIndex, offsetBy: -2)])
                continue
            }
            let address = line.drop { $0 == " " }.prefix { $0 != ":" }
            guard let current, !address.isEmpty, address.allSatisfy(\.isHexDigit), line.count > address.count + 2
            else { continue }
            found[current, default: []].append(line)
        }
        for symbol in symbols {
            let instructions = found[symbol] ?? []
            #expect(instructions.count > 10, "no code found for \(symbol) in \(path)")
            #expect(instructions.contains { $0.contains("ret") }, "\(symbol)")
        }
        return found
    }

    /// The calls (and tail calls) among `symbol`'s instructions, leaving out a sanitized build's instrumentation
    /// (every load and store checked), which is the sanitizer's, not the code's.
    private static func calls(in instructions: [String], of symbol: String) -> [String] {
        let instrumentation = ["<__asan", "<__tsan", "<__ubsan", "<__sanitizer", "<__msan"]
        return instructions.filter { line in
            let mnemonic = mnemonic(of: line)
            let isCall =
                mnemonic.hasPrefix("call")
                || (mnemonic.hasPrefix("jmp") && line.contains("<") && !line.contains("<\(symbol)"))
            return isCall && !instrumentation.contains { line.contains($0) }
        }
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
