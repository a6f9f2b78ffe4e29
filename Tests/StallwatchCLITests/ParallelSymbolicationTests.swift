// Naming frames one image per thread must give exactly what naming each stack on its own gives.
import Foundation
import StallwatchCore
import StallwatchSymbols
import Testing

@testable import StallwatchCLI

@Suite struct ParallelSymbolicationTests {
    /// Code addresses in this test process: a few per executable mapping of several images.
    func codeAddresses() throws -> [[UInt64]] {
        let maps = try #require(ProcFile.read("/proc/self/maps"))
        var perImage: [[UInt64]] = []
        for line in maps.split(separator: "\n") where line.contains(" r-xp ") && line.contains("/") {
            let range = line.split(separator: " ")[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard range.count == 2, range[1] - range[0] > 0x3000 else { continue }
            perImage.append([range[0] + 0x40, range[0] + 0x1010, range[0] + 0x2222])
            if perImage.count == 4 { break }
        }
        try #require(perImage.count >= 3, "maps: \(maps)")
        return perImage
    }

    @Test func sameFramesAsOneStackAtATime() throws {
        let code = try codeAddresses()
        // Stacks that share addresses and images, in different roles (program counter or return address).
        let stacks: [[UInt64]] = [
            [code[0][0], code[1][0], code[0][1], code[2][0], code[1][1]],
            [code[1][0], code[0][0], code[2][1], code[2][2]],
            [code[2][0]],
            [code[0][1], code[1][2], code[code.count - 1][2], code[0][2]],
        ]
        let images = ProcessImages.captureCurrentProcess()
        let symbolicator = Symbolicator()
        let expected = stacks.map { symbolicator.symbolicate($0, images: images) }
        let parallel = ParallelSymbolication.symbolicate(stacks, images: images)
        #expect(parallel == expected)
        #expect(parallel.flatMap { $0 }.contains { $0.symbol != nil }, "some frames are named")
    }

    @Test func emptyStacksStayEmpty() {
        let images = ProcessImages.captureCurrentProcess()
        #expect(ParallelSymbolication.symbolicate([[], []], images: images) == [[], []])
    }
}
