// The built-in DWARF reader against llvm-symbolizer, the oracle: the same functions, inlined frames, files, lines and
// columns for addresses throughout real binaries from gcc, clang and swiftc, DWARF 4 and 5, compressed or not. And
// damaged DWARF must make it give up (throw), never trap.
import CStallwatchElf
import Foundation
import StallwatchCore
import StallwatchImages
import Testing

@testable import StallwatchSymbols

/// C with inlining two deep, a loop-local block holding an inlined call, a static function, a clone-prone helper.
private let cInliner = """
    #include <stdio.h>
    #include <stdlib.h>
    static inline int leaf(int x) { return x * 3 + (x >> 2); }
    static inline int middle(int x) {
        int s = 0;
        for (int i = 0; i < x; i++) {
            s += leaf(i);
            if (s > 1000) {
                int t = leaf(s);
                s -= t / 2;
            }
        }
        return s;
    }
    __attribute__((noinline)) int outer(int n) {
        int total = 0;
        for (int i = 0; i < n; i++) total += middle(i % 17);
        return total;
    }
    struct point { int x, y; };
    __attribute__((noinline)) static int helper(struct point *p) { return p->x * p->y + leaf(p->x); }
    int main(int argc, char **argv) {
        struct point p = { argc, argc + 1 };
        printf("%d %d\\n", outer(argc * 100), helper(&p));
        return 0;
    }
    """

/// Swift with inlined helpers, a generic class, closures and a mutating method.
private let swiftInliner = """
    @inline(__always) func leaf(_ x: Int) -> Int { x &* 3 &+ (x >> 2) }
    @inline(__always) func middle(_ x: Int) -> Int {
        var s = 0
        for i in 0..<x { s &+= leaf(i) }
        return s
    }
    struct Accumulator {
        var values: [Int] = []
        mutating func add(_ v: Int) { values.append(middle(v)) }
    }
    @inline(never) func outer(_ n: Int) -> Int {
        var a = Accumulator()
        for i in 0..<n { a.add(i % 17) }
        return a.values.reduce(0, &+)
    }
    final class Box<T> {
        var item: T
        init(_ item: T) { self.item = item }
        @inline(never) func map<U>(_ f: (T) -> U) -> Box<U> { Box<U>(f(item)) }
    }
    print(outer(CommandLine.arguments.count * 100), Box(3).map { leaf($0) }.item)
    """

/// How each binary is built: compiler and flags.
enum DwarfFlavor: String, CaseIterable, Sendable {
    case gccDwarf5, gccDwarf4, gccDwarf3, gccDwarf2, gccCompressed, clangDwarf5, swiftOptimized, swiftUnoptimized

    var build: (source: String, file: String, compiler: [String]) {
        switch self {
        case .gccDwarf5: (cInliner, "inliner.c", ["/usr/bin/gcc", "-O2", "-g"])
        case .gccDwarf4: (cInliner, "inliner.c", ["/usr/bin/gcc", "-O2", "-gdwarf-4"])
        // DWARF 2 and 3 give range list offsets as constants; -O2 puts main in .text.startup, so the unit has one.
        case .gccDwarf3: (cInliner, "inliner.c", ["/usr/bin/gcc", "-O2", "-gdwarf-3"])
        case .gccDwarf2: (cInliner, "inliner.c", ["/usr/bin/gcc", "-O2", "-gdwarf-2"])
        case .gccCompressed: (cInliner, "inliner.c", ["/usr/bin/gcc", "-O2", "-g", "-gz"])
        case .clangDwarf5: (cInliner, "inliner.c", ["/usr/bin/env", "clang", "-O2", "-g"])
        case .swiftOptimized: (swiftInliner, "main.swift", ["/usr/bin/env", "swiftc", "-O", "-g"])
        case .swiftUnoptimized: (swiftInliner, "main.swift", ["/usr/bin/env", "swiftc", "-Onone", "-g"])
        }
    }

    func binary() throws -> String {
        let build = self.build
        return try buildProgram(source: build.source, fileName: build.file, compiler: build.compiler)
    }
}

/// Offsets throughout every function the binary's symbol table lists: about 20 per function, from its first byte on.
func functionOffsets(in binary: String) throws -> [UInt64] {
    let listing = try #require(
        HelperProcess.run("/usr/bin/readelf", arguments: ["-Ws", binary], environment: [], input: ""), "readelf ran")
    var offsets: Set<UInt64> = []
    for line in listing.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 8, fields[3] == "FUNC", fields[6] != "UND", let start = UInt64(fields[1], radix: 16),
            let size = UInt64(fields[2]), size > 0
        else { continue }
        offsets.formUnion(stride(from: start, to: start + size, by: Int(max(1, size / 20))))
    }
    return offsets.sorted()
}

@Suite struct DwarfReaderTests {
    @Test(arguments: DwarfFlavor.allCases)
    func answersAsLLVMSymbolizerDoes(flavor: DwarfFlavor) throws {
        let binary = try flavor.binary()
        let offsets = try functionOffsets(in: binary)
        try #require(offsets.count >= 60, "addresses in functions: \(offsets.count)")
        try compare(binary, offsets: offsets, expectInlining: flavor != .swiftUnoptimized)
    }

    /// This test bundle: a large SwiftPM debug build, hundreds of units, Swift's DWARF 4 beside C modules' DWARF 5.
    @Test func answersAsLLVMSymbolizerDoesOnThisTestBundle() throws {
        let maps = try #require(FileBytes.text("/proc/self/maps"))
        let line = try #require(
            maps.split(separator: "\n").first { $0.contains("PackageTests") }, "the bundle is mapped")
        let bundle = String(line[try #require(line.firstIndex(of: "/"))...])
        let all = try functionOffsets(in: bundle)
        // About 600 addresses, from all over the binary.
        let step = max(1, all.count / 600)
        let offsets = all.enumerated().filter { $0.offset % step == 0 }.map(\.element)
        try #require(offsets.count >= 500, "addresses: \(offsets.count) of \(all.count)")
        try compare(bundle, offsets: offsets, expectInlining: false)
    }

    /// Names `offsets` of `binary` with the reader and with llvm-symbolizer, and expects the same frames wherever DWARF
    /// covers the address.
    private func compare(_ binary: String, offsets: [UInt64], expectInlining: Bool) throws {
        let symbolizer = try #require(LLVMSymbolizer.locate(environment: [:]), "the toolchain has llvm-symbolizer")
        // Both ways of naming: the interrupted instruction itself, and the call before a return address.
        let lookups = offsets.flatMap { offset in
            [true, false].map {
                SymbolLookup(address: 0x5000_0000 + offset, image: binary, offset: offset, interrupted: $0)
            }
        }
        let images = ProcessImages.captureCurrentProcess()
        let ours = ElfImageReader().frames(for: lookups, images: images)
        let theirs = LLVMSymbolizer(executable: symbolizer).frames(for: lookups, images: images)
        // Which addresses DWARF covers, by the reader's own account.
        let covered = try withDwarfReader(of: binary) { reader in
            try reader.locations(for: lookups.map(\.namedOffset)).map { !$0.isEmpty }
        }
        var differences: [String] = []
        for (index, lookup) in lookups.enumerated() {
            // Where llvm-symbolizer names nothing, the reader gives the bare frame.
            let (mine, expected) = (ours[index] ?? [], theirs[index] ?? [lookup.bareFrame])
            if covered[index] {
                if mine != expected {
                    differences.append("0x\(String(lookup.namedOffset, radix: 16)): \(mine) vs \(expected)")
                }
            } else if let symbol = mine.last?.symbol, symbol != expected.last?.symbol {
                // Start-up code without DWARF: both name it from the symbol table (llvm-symbolizer also guesses the
                // size of unsized symbols and adds STT_FILE names; the reader does as for images without DWARF).
                differences.append("0x\(String(lookup.namedOffset, radix: 16)) (no DWARF): \(symbol) vs \(expected)")
            }
        }
        #expect(differences.isEmpty, "\(differences.count) of \(lookups.count) differ, e.g. \(differences.prefix(3))")
        #expect(covered.filter { $0 }.count >= 20, "DWARF covers \(covered.filter { $0 }.count) addresses")
        let lined = ours.compactMap { $0 }.filter { $0.contains { $0.line != nil } }
        #expect(lined.count >= 20, "addresses with a line: \(lined.count) of \(lookups.count)")
        if expectInlining {
            #expect(ours.contains { ($0?.count ?? 0) > 1 }, "some addresses are in inlined code")
        }
    }

    /// Runs `body` with a reader over the binary's DWARF.
    private func withDwarfReader<T>(of binary: String, _ body: (DwarfReader) throws -> T) throws -> T {
        let symbols = try #require(sw_symbols_open(binary))
        defer { sw_symbols_close(symbols) }
        return try body(try DwarfReader(sections: DwarfSections(of: symbols)))
    }

    /// Corrupted sections make the reader throw or answer, never trap: it runs inside `stallwatch` on any binary.
    @Test func damagedDwarfNeverTraps() throws {
        let binary = try DwarfFlavor.gccDwarf5.binary()
        let symbols = try #require(sw_symbols_open(binary))
        defer { sw_symbols_close(symbols) }
        var original: [String: [UInt8]] = [:]
        for name in DwarfSections.names {
            var size = 0
            if let bytes = sw_symbols_section(symbols, name, &size) {
                original[name] = Array(UnsafeRawBufferPointer(start: bytes, count: size))
            }
        }
        let info = try #require(original[".debug_info"])
        let offsets = try functionOffsets(in: binary)
        var generator = SeededGenerator(seed: 0x5eed)
        var answered = 0
        for round in 0..<300 {
            var damaged = original
            // Flip a few bytes of one section, or cut it short.
            let name = DwarfSections.names[round % DwarfSections.names.count]
            if var bytes = damaged[name], !bytes.isEmpty {
                if round % 4 == 0 {
                    bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
                } else {
                    for _ in 0..<3 {
                        bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                            in: 0...255, using: &generator)
                    }
                }
                damaged[name] = bytes
            }
            if case .success = readDwarf(damaged, addresses: offsets) { answered += 1 }
        }
        #expect(answered > 0 && !info.isEmpty)
    }
}

/// A deterministic generator, so a failing damage pattern can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
