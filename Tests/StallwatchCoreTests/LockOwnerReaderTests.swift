// Reading a lock's owner from forged memory: real mutexes and PI words name their owner; garbage, dead or foreign
// tids, tid 0, negative tids and unreadable memory name nobody; random words never name a thread the lock does not
// record as its owner.
import Testing

@testable import StallwatchCore

/// A process's live threads, as the process numbers them: 100 (the waiter), 101 and 102. Tid 200 is a thread of
/// another process: no thread of this one.
func liveThread(_ tid: Int32) -> Int32? { [100, 101, 102].contains(tid) ? tid : nil }

/// The random words of the fuzz below come from the seeded generator the async chain tests use.
extension SplitMix: RandomNumberGenerator {}

@Suite struct LockOwnerReaderTests {
    static let mutex: UInt64 = 0x5555_0000_1000

    /// A glibc mutex: `__lock`/`__count`, `__owner`/`__nusers`, `__kind`.
    func mutexMemory(lock: UInt32 = 2, owner: Int32, kind: UInt32 = 0) -> FakeMemory {
        var memory = FakeMemory()
        memory.words[Self.mutex] = UInt64(lock)
        memory.words[Self.mutex + 8] = UInt64(UInt32(bitPattern: owner)) | 1 << 32
        memory.words[Self.mutex + 16] = UInt64(kind)
        return memory
    }

    func owner(_ kind: LockKind, _ memory: FakeMemory, at address: UInt64 = mutex) -> LockOwnerReader.Owner {
        LockOwnerReader.owner(of: kind, address: address, waiter: 100, memory: memory, resolveThread: liveThread).owner
    }

    @Test func aMutexNamesItsOwnerField() {
        #expect(owner(.mutex, mutexMemory(owner: 101)) == .thread(101))
        // Recursive and error-checking mutexes (NSLock's) and adaptive ones are mutexes too.
        for type: UInt32 in [1, 2, 3, 0x80 | 2, 0x100] {
            #expect(owner(.mutex, mutexMemory(owner: 102, kind: type)) == .thread(102), "kind \(type)")
        }
    }

    @Test func aMutexItsWaiterHoldsIsADeadlockOfOneThread() {
        #expect(owner(.mutex, mutexMemory(owner: 100)) == .thread(100))
    }

    @Test func aRobustMutexIsNamedSoAndItsWordMustAgree() {
        let robust = LockOwnerReader.owner(
            of: .mutex, address: Self.mutex, waiter: 100,
            memory: mutexMemory(lock: 0x8000_0000 | 101, owner: 101, kind: 0x10), resolveThread: liveThread)
        #expect(robust.kind == .robustMutex && robust.owner == .thread(101))
        guard case .unknown = owner(.mutex, mutexMemory(lock: 0x8000_0000 | 102, owner: 101, kind: 0x10)) else {
            Issue.record("a robust mutex whose word and owner disagree named a holder")
            return
        }
        let died = owner(.mutex, mutexMemory(lock: 0x4000_0000, owner: 0x7FFF_FFFF, kind: 0x10))
        #expect(died == .unknown("its owner died holding it (the robust mutex is inconsistent)"))
    }

    @Test func badOwnerFieldsNameNobody() {
        for owner in [Int32(0), -1, -101, Int32.min, 200, 4_194_305, Int32.max] {
            guard case .unknown = self.owner(.mutex, mutexMemory(owner: owner)) else {
                Issue.record("owner field \(owner) named a holder")
                continue
            }
        }
    }

    @Test func aFreeMutexOrOneOfAnotherKindNamesNobody() {
        #expect(owner(.mutex, mutexMemory(lock: 0, owner: 101)) != .thread(101), "free")
        for kind: UInt32 in [0x20, 0x400, 0x8000_0000, 0xFFFF_FFFF, 0x1234_5678] {
            #expect(owner(.mutex, mutexMemory(owner: 101, kind: kind)) != .thread(101), "kind \(kind)")
        }
    }

    @Test func unreadableOrMisalignedMemoryNamesNobody() {
        var partial = mutexMemory(owner: 101)
        partial.words[Self.mutex + 16] = nil
        #expect(
            owner(.mutex, partial)
                == .unknown("the mutex at 0x555500001000 could not be read (nothing is mapped there)"))
        #expect(owner(.mutex, mutexMemory(owner: 101), at: Self.mutex + 4) != .thread(101))
        #expect(owner(.mutex, FakeMemory(), at: 0) != .thread(101))
        #expect(owner(.piFutex, FakeMemory(), at: 0x1002) != .thread(101))
    }

    @Test func aPIWordNamesTheTidInItsLowBits() {
        var memory = FakeMemory()
        // The word at 0x2004 is the high half of the 8-byte word at 0x2000.
        memory.words[0x2000] = UInt64(0x8000_0000 | 102) << 32 | 0x1234
        #expect(owner(.piFutex, memory, at: 0x2004) == .thread(102))
        #expect(owner(.piMutex, memory, at: 0x2004) == .thread(102))
        memory.words[0x2000] = UInt64(0x8000_0000 | 101)
        #expect(owner(.piFutex, memory, at: 0x2000) == .thread(101))
    }

    @Test func aPIWordNamingNobodyOrTheWaiterNamesNobody() {
        for word: UInt32 in [0, 0x4000_0000, 0x8000_0000, 100, 0x8000_0000 | 100, 200, 0x3FFF_FFFF] {
            var memory = FakeMemory()
            memory.words[0x2000] = UInt64(word)
            guard case .unknown = owner(.piFutex, memory, at: 0x2000) else {
                Issue.record("PI word \(word) named a holder")
                continue
            }
        }
    }

    @Test func aJoinNamesTheThreadItWaitsFor() {
        var memory = FakeMemory()
        memory.words[0x3000] = 101
        #expect(owner(.threadJoin, memory, at: 0x3000) == .thread(101))
        memory.words[0x3000] = 0
        #expect(owner(.threadJoin, memory, at: 0x3000) == .unknown("the joined thread had just exited"))
        memory.words[0x3000] = 100
        #expect(owner(.threadJoin, memory, at: 0x3000) != .thread(100), "a join of itself")
    }

    @Test func kindsWithoutOwnersNeverReadMemory() {
        var memory = mutexMemory(owner: 101)
        memory.words[0x2000] = 101
        for kind in [LockKind.conditionVariable, .rwlock, .semaphore, .libcLock, .futex] {
            guard case .unknown = owner(kind, memory) else {
                Issue.record("\(kind) named a holder")
                continue
            }
            guard case .unknown = owner(kind, memory, at: 0x2000) else {
                Issue.record("\(kind) named a holder")
                continue
            }
        }
    }

    /// Random memory around the address, random addresses, random kinds: whatever is named is a live thread of the
    /// process, and exactly the one the lock's own owner field (or word) records.
    @Test func randomWordsNeverNameAWrongHolder() {
        var random = SplitMix(seed: 28)
        let tids: [UInt64] = [0, 100, 101, 102, 200, 0xFFFF_FFFF, 0x7FFF_FFFF, 0x8000_0065, 0x4000_0066]
        var named = 0
        for _ in 0..<20_000 {
            let base = (0x10_0000 + UInt64.random(in: 0..<64, using: &random) * 4)
            var memory = FakeMemory()
            for offset in stride(from: UInt64(0), to: 48, by: 8) where Bool.random(using: &random) || offset < 24 {
                let aligned = (base & ~7) + offset
                // Often a plausible tid in either half, otherwise any bits.
                memory.words[aligned] =
                    Bool.random(using: &random)
                    ? tids.randomElement(using: &random)! | tids.randomElement(using: &random)! << 32
                    : random.next()
                if Bool.random(using: &random), offset == 16 {
                    memory.words[aligned] = UInt64.random(in: 0..<4, using: &random)
                }
            }
            let kind = LockKind.allCases.randomElement(using: &random)!
            let result = LockOwnerReader.owner(
                of: kind, address: base, waiter: 100, memory: memory, resolveThread: liveThread)
            guard case .thread(let thread) = result.owner else { continue }
            named += 1
            #expect(liveThread(thread) != nil, "named \(thread), no thread of the process")
            let recorded: Int32
            switch result.kind {
            case .mutex, .robustMutex: recorded = Int32(truncatingIfNeeded: memory.words[base + 8] ?? 0)
            default:
                let word = memory.words[base & ~7] ?? 0
                let half = UInt32(truncatingIfNeeded: base & 4 == 0 ? word : word >> 32)
                recorded = Int32(bitPattern: result.kind == .threadJoin ? half : half & 0x3FFF_FFFF)
            }
            #expect(
                thread == recorded,
                "named \(thread), the lock records \(recorded) (\(kind), 0x\(String(base, radix: 16)))")
            if result.kind != .mutex && result.kind != .robustMutex { #expect(thread != 100, "the waiter itself") }
        }
        // The property is not empty: plausible words do name owners.
        #expect(named > 100)
    }
}
