// The culprit is code the user wrote: a release build whose stalls run in standard-library specializations and
// synthesized Codable code, emitted into the program's own image.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct CulpritTests {
    static let program = """
        import Foundation

        struct Item: Codable, Equatable { var id: Int; var name: String }

        func now() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }

        enum Inventory {
            static let ids = Array(0..<20_000)
            static let json = try! JSONEncoder().encode((0..<2000).map { Item(id: $0, name: "item \\($0)") })

            /// Searches with the standard library's generic firstIndex(of:): specialized into this binary.
            @inline(never) static func findDuplicates(until deadline: UInt64) -> Int {
                var found = 0
                var probe = 19_999
                while now() < deadline {
                    found &+= ids.firstIndex(of: probe) ?? 0
                    probe = probe == 0 ? 19_999 : probe - 1
                }
                return found
            }

            /// Decodes with synthesized Codable (`Item.init(from:)` at <compiler-generated>).
            @inline(never) static func reloadCatalog(until deadline: UInt64) -> Int {
                var count = 0
                while now() < deadline { count &+= (try? JSONDecoder().decode([Item].self, from: json))?.count ?? 0 }
                return count
            }
        }

        func measure(_ index: Int, _ culprit: String, _ body: (UInt64) -> Int) {
            let start = now()
            let result = body(start + 600_000_000)
            let milliseconds = Double(now() - start) / 1e6
            FileHandle.standardError.write(Data(
                "stallwatch-demo: stall scenario=culprit index=\\(index) start_ns=\\(start) duration_ms=\\(milliseconds) culprit=\\(culprit) \\(result % 2)\\n".utf8))
        }

        let start = Date()
        RunLoop.main.add(Timer(fire: start + 0.3, interval: 0, repeats: false) { _ in
            measure(1, "Inventory.findDuplicates") { Inventory.findDuplicates(until: $0) }
        }, forMode: .common)
        RunLoop.main.add(Timer(fire: start + 1.5, interval: 0, repeats: false) { _ in
            measure(2, "Inventory.reloadCatalog") { Inventory.reloadCatalog(until: $0) }
        }, forMode: .common)
        RunLoop.main.run(until: start + 2.6)
        """

    @Test func theCulpritIsTheNearestUserWrittenFunction() throws {
        let program = try compileSwift(Self.program, name: "inventory", extraArguments: ["-O"])
        let result = try runStallwatch(["run", "--format", "json", "--", program])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = result.groundTruth
        let stalls = try result.stalls
        #expect(truth.count == 2 && stalls.count == 2, "\(result.stdout)\n\(result.stderr)")
        for (stall, actual) in zip(stalls, truth) {
            let culprit = stall.culprit?.symbol ?? "none"
            #expect(culprit.contains(actual.culprit), "culprit \(culprit), expected \(actual.culprit)")
            #expect(!culprit.contains("firstIndex") && !culprit.contains("init(from:)"))
            #expect(stall.culprit?.file?.hasSuffix("inventory.swift") == true)
            let duration = try #require(stall.durationMs.value)
            #expect(duration >= actual.durationMs - 5 && duration <= actual.durationMs + 30)
        }
        // The innermost frame stays in the stack as it was: the specialization the first stall spins in.
        let first = try #require(stalls.first)
        #expect(first.symbols.contains { $0.contains("firstIndex(of:)") }, "\(first.symbols)")
        #expect(Set(stalls.map(\.fingerprint)).count == 2)
    }

    /// A stall deep in a recursion: the sample keeps the innermost frames (the culprit) and the outermost (the run
    /// loop and `_start`), and says how many were left out between them.
    @Test func aStallDeepInARecursionKeepsBothEndsOfItsStack() throws {
        let program = try compileSwift(
            """
            import Foundation
            @inline(never) func descend(_ depth: Int) -> Int {
                if depth == 0 {
                    usleep(600_000)
                    return 0
                }
                return descend(depth - 1) &+ 1
            }
            DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { _ = descend(3000); exit(0) }
            RunLoop.main.run()
            """, name: "deep", extraArguments: ["-Onone"])
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let result = try runStallwatch(
            ["run", "--threshold", "100ms", "--max-frames", "64", "--format", "json", "--", program], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let sample = try #require(try result.stalls.first?.samples.first, "\(result.stdout)")
        let truncated = try #require(sample.truncated.value, "the sample says it was cut: \(result.stdout)")
        // 64 captured, less the agent's stand-in frames among the outermost (at most 8), which reports leave out.
        #expect(sample.frames.count >= 56 && sample.frames.count <= 64, "\(sample.frames.count) frames")
        #expect(!sample.frames.contains { $0.image?.contains("libStallwatchAgent") == true })
        #expect((truncated.omittedFrames ?? 0) > 2900, "\(truncated)")
        #expect(sample.frames.last?.symbol == "_start", "the outermost frames are kept")
        #expect(sample.frames[..<truncated.resumesAtFrame].contains { $0.symbol?.contains("descend") == true })
        #expect(
            sample.frames[truncated.resumesAtFrame...].contains { $0.symbol?.contains("CFRunLoopRun") == true },
            "the run loop's frames are among the outermost")
    }
}
