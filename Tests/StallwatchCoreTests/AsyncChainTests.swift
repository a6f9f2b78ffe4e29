// Walking async contexts over a fake memory: real chains, and forged ones that must end in an error, never a crash
// or a hang.
import Testing

@testable import StallwatchCore

/// A process's memory as a dictionary of words; every other address is unreadable.
struct FakeMemory: ProcessMemoryReader {
    var words: [UInt64: UInt64] = [:]
    var reads = 0

    func word(at address: UInt64) throws(MemoryReadError) -> UInt64 {
        guard let value = words[address] else { throw MemoryReadError(address: address, errno: 14) }
        return value
    }

    /// A context at `address`: its parent's context and its resume function.
    mutating func context(at address: UInt64, parent: UInt64, resume: UInt64) {
        words[address] = parent
        words[address + 8] = resume
    }
}

/// Code lies at 0x1000..<0x2000 in these tests.
func isCode(_ address: UInt64) -> Bool { (0x1000..<0x2000).contains(address) }

@Suite struct AsyncChainTests {
    @Test func followsParentsToTheEntryContext() {
        var memory = FakeMemory()
        memory.context(at: 0x10_000, parent: 0x20_000, resume: 0x1100)
        memory.context(at: 0x20_000, parent: 0x30_000, resume: 0x1200)
        memory.context(at: 0x30_000, parent: 0, resume: 0x1300)
        let walk = AsyncChain.walk(from: 0x10_000, memory: memory, isCode: isCode)
        #expect(walk == AsyncChain.Walk(resumePoints: [0x1100, 0x1200, 0x1300]))
    }

    @Test func anEntryContextWithoutResumeFunctionEndsTheChain() {
        var memory = FakeMemory()
        memory.context(at: 0x10_000, parent: 0x20_000, resume: 0x1100)
        memory.context(at: 0x20_000, parent: 0, resume: 0)
        #expect(AsyncChain.walk(from: 0x10_000, memory: memory, isCode: isCode).resumePoints == [0x1100])
    }

    @Test func aLoopIsDetected() {
        var memory = FakeMemory()
        memory.context(at: 0x10_000, parent: 0x20_000, resume: 0x1100)
        memory.context(at: 0x20_000, parent: 0x10_000, resume: 0x1200)
        let walk = AsyncChain.walk(from: 0x10_000, memory: memory, isCode: isCode)
        #expect(walk.resumePoints == [0x1100, 0x1200])
        #expect(walk.error == "async context 0x10000 loops back")
    }

    @Test func aContextThatIsItsOwnParentIsALoop() {
        var memory = FakeMemory()
        memory.context(at: 0x10_000, parent: 0x10_000, resume: 0x1100)
        #expect(AsyncChain.walk(from: 0x10_000, memory: memory, isCode: isCode).error?.contains("loops") == true)
    }

    @Test func anUnreadableParentKeepsTheCallersFound() {
        var memory = FakeMemory()
        memory.context(at: 0x10_000, parent: 0xdead_0000, resume: 0x1100)
        let walk = AsyncChain.walk(from: 0x10_000, memory: memory, isCode: isCode)
        #expect(walk.resumePoints == [0x1100])
        #expect(walk.error == "async context 0xdead0000 is not readable (errno 14)")
    }

    @Test func aResumeFunctionOutsideCodeStopsTheWalk() {
        var memory = FakeMemory()
        memory.context(at: 0x10_000, parent: 0x20_000, resume: 0x9999_0000)
        let walk = AsyncChain.walk(from: 0x10_000, memory: memory, isCode: isCode)
        #expect(walk.resumePoints.isEmpty)
        #expect(walk.error?.contains("outside any code") == true)
    }

    @Test(arguments: [UInt64(0x10_003), UInt64.max - 7, UInt64.max])
    func aMisalignedOrWrappingContextIsRefused(context: UInt64) {
        let walk = AsyncChain.walk(from: context, memory: FakeMemory(), isCode: isCode)
        #expect(walk.resumePoints.isEmpty)
        #expect(walk.error?.contains("not a valid address") == true)
    }

    @Test func anEndlessChainIsCutShortAtTheBound() {
        // Every context's parent is the next one up: a chain longer than any bound, without a loop.
        var memory = FakeMemory()
        for index in UInt64(0)..<UInt64(AsyncChain.maxLinks + 10) {
            memory.context(at: 0x10_000 + index * 16, parent: 0x10_000 + (index + 1) * 16, resume: 0x1100)
        }
        let walk = AsyncChain.walk(from: 0x10_000, memory: memory, isCode: isCode)
        #expect(walk.resumePoints.count == AsyncChain.maxLinks)
        #expect(walk.error?.contains("cut short") == true)
    }

    @Test func forgedMemoryNeverHangsOrTraps() {
        // Random words, dense enough that walks follow many of them: each must end within its bound.
        var generator = SplitMix(seed: 15)
        for _ in 0..<500 {
            var memory = FakeMemory()
            for _ in 0..<64 {
                let address = 0x10_000 + (generator.next() % 64) * 8
                let value =
                    generator.next() % 3 == 0 ? 0x1000 + generator.next() % 0x1000 : 0x10_000 + generator.next() % 600
                memory.words[address] = value
            }
            let start = 0x10_000 + (generator.next() % 64) * 8
            let walk = AsyncChain.walk(from: start, memory: memory, isCode: isCode)
            #expect(walk.resumePoints.count <= AsyncChain.maxLinks)
            #expect(walk.resumePoints.allSatisfy(isCode))
        }
    }

    @Test func hintsPreferTheFrameRecord() {
        #expect(AsyncContextHint(frameRecord: 0x10, register: 0x20).candidates == [0x10, 0x20])
        #expect(AsyncContextHint(frameRecord: 0, register: 0x20).candidates == [0x20])
        #expect(AsyncContextHint(frameRecord: 0x20, register: 0x20).candidates == [0x20])
        #expect(AsyncContextHint(frameRecord: 0, register: 0).candidates.isEmpty)
    }

    @Test func aPartialFunctionIsNamedAsItsFunction() {
        #expect(AsyncFunction.logicalName("(2) suspend resume partial function for layoutPass()") == "layoutPass()")
        #expect(
            AsyncFunction.logicalName("(1) await resume partial function for static App.main()") == "static App.main()")
        #expect(AsyncFunction.logicalName("layoutPass()") == "layoutPass()")
        #expect(AsyncFunction.logicalName("(1) something else") == "(1) something else")
        #expect(AsyncFunction.isPartialFunction("(12) await resume partial function for f()"))
        #expect(!AsyncFunction.isPartialFunction("closure #1 () async -> () in f()"))
    }
}

/// A small deterministic generator, so a failure can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
