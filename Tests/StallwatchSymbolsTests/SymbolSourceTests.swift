// The symbol sources on their own: which frames each names, how llvm-symbolizer's answers are read, what happens when
// a source fails, and that naming stacks in one batch gives what naming them one at a time gives.
import Foundation
import StallwatchCore
import Testing

@testable import StallwatchImages
@testable import StallwatchSymbols

/// Code addresses in this test process: a few per executable mapping of several images.
func codeAddresses(images count: Int = 4) throws -> [[UInt64]] {
    let maps = try #require(FileBytes.text("/proc/self/maps"))
    var perImage: [[UInt64]] = []
    for line in maps.split(separator: "\n") where line.contains(" r-xp ") && line.contains("/") {
        let range = line.split(separator: " ")[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
        guard range.count == 2, range[1] - range[0] > 0x3000 else { continue }
        perImage.append([range[0] + 0x40, range[0] + 0x1010, range[0] + 0x2222])
        if perImage.count == count { break }
    }
    try #require(perImage.count >= 3, "maps: \(maps)")
    return perImage
}

/// The lookup for an address of this process, as the symbolicator would make it.
func symbolLookup(_ address: UInt64, interrupted: Bool = true, in images: ProcessImages) throws -> SymbolLookup {
    let image = try #require(images.image(containing: address))
    return SymbolLookup(address: address, image: image.path, offset: image.offset, interrupted: interrupted)
}

@Suite struct ElfImageReaderTests {
    /// A loaded library's path, from this process's memory map.
    func loadedLibrary(named name: String) throws -> String {
        let maps = try #require(FileBytes.text("/proc/self/maps"))
        let line = try #require(maps.split(separator: "\n").first { $0.hasSuffix("/" + name) }, "\(name) is loaded")
        return String(line[try #require(line.firstIndex(of: "/"))...])
    }

    /// binutils' reading of a dynamic symbol: its address in the file, as the oracle for ours.
    func dynamicSymbolValue(_ function: String, in library: String) throws -> UInt64 {
        let listing = HelperProcess.run(
            "/usr/bin/readelf", arguments: ["-Ws", "--dyn-syms", library], environment: [], input: "")
        for line in try #require(listing, "readelf ran").split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[3] == "FUNC",
                fields[7].split(separator: "@").first.map(String.init) == function
            else { continue }
            return try #require(UInt64(fields[1], radix: 16))
        }
        Issue.record("readelf lists no \(function) in \(library)")
        return 0
    }

    /// Functions exported by libc and by the toolchain's libFoundation (which holds CoreFoundation), a few bytes in;
    /// `sigsuspend` has aliases (`__sigsuspend`, and `__GI___sigsuspend` in the debug file): the public name wins.
    @Test(arguments: [
        ("qsort", "libc.so.6"), ("sigsuspend", "libc.so.6"), ("CFRunLoopRunSpecific", "libFoundation.so"),
    ])
    func namesAnExportedFunctionFromItsTable(function: String, library: String) throws {
        let path = try loadedLibrary(named: library)
        // Shared objects are linked at 0: the symbol's value is its offset from the load base.
        let offset = try dynamicSymbolValue(function, in: path) + 4
        let lookup = SymbolLookup(address: 0x7000_0000_0000 + offset, image: path, offset: offset, interrupted: true)
        let frames = ElfImageReader(reading: .symbolsOfImagesWithoutDwarf).frames(
            for: [lookup], images: ProcessImages.captureCurrentProcess())
        let frame = try #require(frames.first??.first, "named by the tables")
        #expect(frame.symbol == function)
        #expect(frame.address == lookup.address && frame.file == nil && !frame.inlined)
    }

    /// The agent's snapshot of its own process, as sent to the collector, never makes the toolchain's map: making it
    /// reads every mapped file's header from memory and faults on a mapping the program unmaps meanwhile (it did,
    /// under AddressSanitizer, beside tests that map and unmap ELF files).
    @Test func theSnapshotSentToTheCollectorReadsNoImageHeaders() {
        let images = ProcessImages.captureCurrentProcess()
        #expect(!images.encoded().isEmpty)
        #expect(!images.hasMadeToolchainMap)
    }

    /// Told not to read DWARF (`STALLWATCH_SYMBOLIZER` names an llvm-symbolizer for that), it leaves images with DWARF
    /// to the next source.
    @Test func leavesImagesWithDebugInfoToTheNextSource() throws {
        let binary = try buildProgram(source: cSpinner, fileName: "spinner.c", compiler: ["/usr/bin/cc", "-g"])
        let tables = ElfImageReader(reading: .symbolsOfImagesWithoutDwarf)
        #expect(tables.hasDebugInfo(binary))
        let lookups = [SymbolLookup(address: 0x1140, image: binary, offset: 0x1140, interrupted: true)]
        #expect(tables.frames(for: lookups, images: ProcessImages.captureCurrentProcess()) == [nil])
        #expect(!tables.hasDebugInfo("/usr/lib/x86_64-linux-gnu/libc.so.6"))
        #expect(!tables.hasDebugInfo("/no/such/file"))
    }
}

@Suite struct LLVMSymbolizerTests {
    let lookup = SymbolLookup(address: 0x5555_0000_1235, image: "/bin/app", offset: 0x1235, interrupted: false)

    @Test func queriesTheCallBeforeAReturnAddress() {
        #expect(LLVMSymbolizer.query(for: lookup) == "\"/bin/app\" 0x1234\n")
        // A program linked at 0x400000 (not position-independent): the address in the file, not the offset.
        #expect(LLVMSymbolizer.query(for: lookup, linkBase: 0x40_0000) == "\"/bin/app\" 0x401234\n")
        let interrupted = SymbolLookup(address: 1, image: "/bin/app", offset: 0x1235, interrupted: true)
        #expect(LLVMSymbolizer.query(for: interrupted) == "\"/bin/app\" 0x1235\n")
        // Paths a query line cannot carry are left to the next source.
        #expect(
            LLVMSymbolizer.query(for: SymbolLookup(address: 1, image: "/a\"b", offset: 1, interrupted: true)) == nil)
        #expect(
            LLVMSymbolizer.query(for: SymbolLookup(address: 1, image: "[heap]", offset: 1, interrupted: true)) == nil)
    }

    @Test func readsInlinedFramesInnermostFirst() throws {
        let answer = """
            {"Address":"0x1234","ModuleName":"/bin/app","Symbol":[\
            {"Column":9,"FileName":"/src/Inner.swift","FunctionName":"$s3app5inneryyF","Line":12},\
            {"Column":0,"FileName":"/<compiler-generated>","FunctionName":"$s3app5outeryyF","Line":0}]}
            """
        let frames = try #require(LLVMSymbolizer.frames(fromAnswer: Substring(answer), for: lookup))
        #expect(frames.count == 2)
        #expect(frames[0].symbol == "inner()" && frames[0].inlined)
        #expect(frames[0].file == "/src/Inner.swift" && frames[0].line == 12 && frames[0].column == 9)
        #expect(frames[1].symbol == "outer()" && !frames[1].inlined)
        #expect(frames[1].file == "<compiler-generated>" && frames[1].line == nil && frames[1].column == nil)
        #expect(frames.allSatisfy { $0.address == lookup.address && $0.offset == 0x1235 && $0.image == "/bin/app" })
    }

    /// An image it cannot read, or an address it cannot name, is left to the next source, which may do better.
    @Test func whatItCannotNameGoesToTheNextSource() throws {
        let error = #"{"Address":"0x1234","Error":{"Message":"No such file or directory"},"ModuleName":"/bin/app"}"#
        #expect(LLVMSymbolizer.frames(fromAnswer: Substring(error), for: lookup) == nil)
        let unknown =
            #"{"Address":"0x1234","ModuleName":"/bin/app","Symbol":[{"FileName":"","FunctionName":"??","Line":0}]}"#
        #expect(LLVMSymbolizer.frames(fromAnswer: Substring(unknown), for: lookup) == nil)
        #expect(LLVMSymbolizer.frames(fromAnswer: "not json", for: lookup) == nil)
    }

    @Test func findsTheToolchainsSymbolizerOrTheOneNamed() throws {
        let found = try #require(LLVMSymbolizer.locate(environment: [:]))
        #expect(found.hasSuffix("/bin/llvm-symbolizer") && FileManager.default.isExecutableFile(atPath: found))
        #expect(LLVMSymbolizer.locate(environment: ["STALLWATCH_SYMBOLIZER": "runtime"]) == nil)
        #expect(LLVMSymbolizer.locate(environment: ["STALLWATCH_SYMBOLIZER": "/bin/true"]) == "/bin/true")
        #expect(LLVMSymbolizer.locate(environment: ["STALLWATCH_SYMBOLIZER": "/no/such/tool"]) == nil)
    }

    /// A stallwatch carrying its own Swift runtime finds the toolchain through the `swift` on PATH, before an older
    /// LLVM's llvm-symbolizer that comes earlier on PATH.
    @Test func prefersTheSymbolizerBesideSwiftOnThePath() throws {
        let root = NSTemporaryDirectory() + "stallwatch-locate-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (older, links, toolchain) = (root + "/usr-bin", root + "/links", root + "/toolchain/usr/bin")
        for directory in [older, links, toolchain] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        for tool in [older + "/llvm-symbolizer", toolchain + "/llvm-symbolizer", toolchain + "/swift"] {
            #expect(FileManager.default.createFile(atPath: tool, contents: Data("#!/bin/sh\n".utf8)))
            #expect(chmod(tool, 0o755) == 0)
        }
        try FileManager.default.createSymbolicLink(atPath: links + "/swift", withDestinationPath: toolchain + "/swift")
        let candidates = LLVMSymbolizer.candidates(path: "\(older):\(links)", runtimeDirectory: nil)
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        #expect(
            found.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
                == URL(fileURLWithPath: toolchain + "/llvm-symbolizer").resolvingSymlinksInPath().path, "\(candidates)")
        // Without a swift on PATH, the first llvm-symbolizer there.
        #expect(LLVMSymbolizer.candidates(path: older, runtimeDirectory: nil) == [older + "/llvm-symbolizer"])
    }

    /// A symbolizer that fails (here one that prints nothing) leaves every frame to the toolchain's reader.
    @Test func aFailingSymbolizerFallsBackToTheRuntime() throws {
        let code = try codeAddresses()
        let stack = [code[0][0], code[1][1], code[2][2]]
        let images = ProcessImages.captureCurrentProcess()
        let broken = LLVMSymbolizer(executable: "/bin/true")
        let lookups = stack.compactMap { address in
            images.image(containing: address).map {
                SymbolLookup(address: address, image: $0.path, offset: $0.offset, interrupted: false)
            }
        }
        #expect(!lookups.isEmpty)
        #expect(broken.frames(for: lookups, images: images).allSatisfy { $0 == nil })
        let withBroken = Symbolicator(sources: [broken]).symbolicate(stack, images: images)
        #expect(withBroken == Symbolicator().symbolicate(stack, images: images))
    }
}

@Suite struct HelperProcessTests {
    @Test func feedsItsInputAndCollectsItsOutput() {
        // More than a pipe holds either way: nothing may wait on the other side.
        let input = String(repeating: "0123456789abcdef\n", count: 64 * 1024)
        #expect(HelperProcess.run("/bin/cat", arguments: [], environment: [], input: input) == input)
    }

    /// A helper that hangs is killed at its deadline: the collector calling it must never wait for ever.
    @Test func aHungHelperIsKilledAtItsDeadline() {
        let started = ContinuousClock.now
        #expect(
            HelperProcess.run("/bin/sleep", arguments: ["30"], environment: [], input: "", deadline: .milliseconds(300))
                == nil)
        // Generous: the point is that it returns long before the helper would have ended by itself.
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func failureIsNil() {
        #expect(HelperProcess.run("/bin/false", arguments: [], environment: [], input: "") == nil)
        #expect(HelperProcess.run("/no/such/tool", arguments: [], environment: [], input: "") == nil)
        #expect(HelperProcess.run("/bin/sh", arguments: ["-c", "kill -TERM $$"], environment: [], input: "") == nil)
    }

}

@Suite struct BatchSymbolicationTests {
    @Test(arguments: SymbolicatorKind.allCases)
    func sameFramesAsOneStackAtATime(kind: SymbolicatorKind) throws {
        let code = try codeAddresses()
        // A few bytes into functions every symbolicator names (the other addresses may fall between functions).
        let qsort = try #require(dlsym(dlopen(nil, RTLD_NOW), "qsort")).advanced(by: 4)
        let named = UInt64(UInt(bitPattern: qsort))
        // Stacks that share addresses and images, in different roles (program counter or return address).
        let stacks: [[UInt64]] = [
            [code[0][0], code[1][0], named, code[0][1], code[2][0], code[1][1]],
            [code[1][0], code[0][0], code[2][1], code[2][2], named],
            [code[2][0]],
            [named, code[0][1], code[1][2], code[code.count - 1][2], code[0][2], 0],
        ]
        let images = ProcessImages.captureCurrentProcess()
        let expected = stacks.map { kind.make().symbolicate($0, images: images) }
        let batch = kind.make().symbolicate(stacks: stacks, images: images)
        #expect(batch == expected)
        if kind == .runtime {
            #expect(batch.flatMap { $0 }.contains { $0.symbol != nil }, "some frames are named")
        } else {
            // The CLI's symbol tables name an exported libc function.
            #expect(batch.flatMap { $0 }.contains { $0.symbol == "qsort" }, "qsort is named: \(batch)")
        }
        #expect(kind.make().symbolicate(stacks: [[], []], images: images) == [[], []])
    }
}

@Suite struct DemanglerTests {
    /// swiftc names a closure in top-level code `closure #1 in ` with nothing after it.
    @Test func aClosureInTopLevelCodeIsNamedSo() {
        #expect(Demangler.readable("$s3topS2icfU_") == "closure #1 in top-level code")
        #expect(Demangler.readable("$s3top5helloyyFyycfU_") == "closure #1 in hello()")
    }
}

@Suite struct AsyncPartialFunctionNameTests {
    /// Real names from a swiftc 6.3 async `main`: the simplified demangling alone says `static App.main()` for all.
    @Test(arguments: [
        ("$s2am3AppV4mainyyYaFZTY1_", "(2) suspend resume partial function for static App.main()"),
        ("$s2am3AppV4mainyyYaFZTY_", "(0) suspend resume partial function for static App.main()"),
        ("$s2am3AppV4mainyyYaFZTQ12_", "(13) await resume partial function for static App.main()"),
        ("$s2am3AppV4mainyyYaFZ", "static App.main()"),
    ])
    func anAsyncResumeFunctionKeepsItsKind(raw: String, readable: String) {
        #expect(Demangler.readable(raw) == readable)
    }

    /// Names that end like a resume function's but are no Swift name (C, assembly): shown as they are.
    @Test(arguments: ["$sfooTQ0_", "_$sfooTQ12_", "$SxyzTY1_", "frobnicateTQ0_", "_ZN3fooTQ0_"])
    func aNameTheDemanglerDoesNotReadIsNoResumeFunction(raw: String) {
        #expect(Demangler.readable(raw) == raw)
    }
}

@Suite struct SymbolNameLengthTests {
    @Test func aLongNameIsCutToTheLimitAndMarked() {
        #expect(SymbolName.capped("main") == "main")
        let exact = String(repeating: "a", count: SymbolName.longest)
        #expect(SymbolName.capped(exact) == exact)
        let cut = SymbolName.capped(String(repeating: "b", count: 1 << 20))
        #expect(cut == String(repeating: "b", count: SymbolName.longest) + "…")
        // At a character's boundary: a 4-byte scalar that would end past the limit is left out whole.
        let wide = String(repeating: "c", count: SymbolName.longest - 2) + "😀" + "d"
        #expect(SymbolName.capped(wide) == String(repeating: "c", count: SymbolName.longest - 2) + "…")
    }

    /// A 1 MiB name in an ELF symbol table (1.15 MB of `stack` output, 13.8 MB of NDJSON for two stalls) is read
    /// as 4 KiB and a mark.
    @Test func aMebibyteNameInASymbolTableIsCutWhereItIsRead() throws {
        let name = "long_" + String(repeating: "x", count: 1 << 20)
        let library = try buildProgram(
            source: "int long_named(void) __asm__(\"\(name)\");\nint long_named(void) { return 42; }\n",
            fileName: "long.c", compiler: ["/usr/bin/cc", "-shared", "-fPIC"])
        defer { try? FileManager.default.removeItem(atPath: (library as NSString).deletingLastPathComponent) }
        let handle = try #require(dlopen(library, RTLD_NOW | RTLD_LOCAL), "dlopen")
        defer { dlclose(handle) }
        let address = UInt64(UInt(bitPattern: try #require(dlsym(handle, name)))) + 1
        // The load base: the start of the library's first mapping.
        let maps = try #require(FileBytes.text("/proc/self/maps"))
        let mapping = try #require(maps.split(separator: "\n").first { $0.hasSuffix(" " + library) })
        let base = try #require(UInt64(mapping.prefix { $0 != "-" }, radix: 16))
        let lookup = SymbolLookup(address: address, image: library, offset: address - base, interrupted: true)
        let frames = ElfImageReader(reading: .symbolsOnly).frames(
            for: [lookup], images: ProcessImages.captureCurrentProcess())
        let symbol = try #require(frames.first??.first?.symbol, "named by the table")
        #expect(symbol == String(name.prefix(SymbolName.longest)) + "…")
    }
}
