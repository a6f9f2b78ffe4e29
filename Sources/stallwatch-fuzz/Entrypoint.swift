// Built two ways. With -DSTALLWATCH_FUZZ and -sanitize=fuzzer (Scripts/fuzz), libFuzzer drives the target that
// STALLWATCH_FUZZ_TARGET names. Built plainly, it replays files through a target: the seed corpora and every crash
// found, as a regression test (Scripts/test).
import FoundationEssentials
import Glibc

/// One line on stderr.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

#if STALLWATCH_FUZZ
    nonisolated(unsafe) private var selected: FuzzTarget?

    @_cdecl("LLVMFuzzerInitialize")
    func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
    ) -> Int32 {
        let name = ProcessInfo.processInfo.environment["STALLWATCH_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            say("stallwatch-fuzz: set STALLWATCH_FUZZ_TARGET to one of \(names)")
            exit(64)
        }
        selected = target
        return 0
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        selected?.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    /// libFuzzer's driver, for a program that has a `main` of its own.
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    /// SwiftPM links an executable target's entry point under this name: hand the process to libFuzzer.
    @_cdecl("stallwatch_fuzz_main")
    func fuzzMain(
        _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> Int32 {
        // The driver calls LLVMFuzzerInitialize first, as libFuzzer's own main does.
        var count = argc
        var arguments = argv
        return withUnsafeMutablePointer(to: &count) { countPointer in
            withUnsafeMutablePointer(to: &arguments) { argumentsPointer in
                runFuzzerDriver(countPointer, argumentsPointer) { data, size in fuzzerTestOneInput(data, size) }
            }
        }
    }
#else
    /// `stallwatch-fuzz TARGET PATH...`: runs every file (of a directory too) through the target.
    @main
    struct Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
                say("usage: stallwatch-fuzz \(names) FILE|DIRECTORY...")
                exit(64)
            }
            var count = 0
            for path in arguments.dropFirst() {
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: path))?.sorted()
                for file in entries.map({ $0.map { path + "/" + $0 } }) ?? [path] {
                    guard let bytes = FileManager.default.contents(atPath: file) else { continue }
                    target.run([UInt8](bytes))
                    count += 1
                }
            }
            print("stallwatch-fuzz: \(target.rawValue): \(count) inputs replayed")
        }
    }
#endif
