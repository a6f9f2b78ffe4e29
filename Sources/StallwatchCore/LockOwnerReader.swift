// Who holds a lock, read from the workload's memory: glibc's `__owner`, or the tid the kernel's PI protocol keeps in
// the futex word. Every value read is untrusted: one that does not check out names nobody.

/// Reads a lock's owner from a process's memory, and checks it before naming it.
///
/// The layout is glibc's `struct __pthread_mutex_s` on x86-64 (`bits/struct_mutex.h`, glibc 2.36): `__lock` at 0 (the
/// futex word), `__count` at 4, `__owner` at 8 (the holder's tid, set once it has the lock), `__nusers` at 12,
/// `__kind` at 16. A PI futex (`FUTEX_LOCK_PI`: Swift's `Synchronization.Mutex`, a mutex with `PTHREAD_PRIO_INHERIT`)
/// and a robust mutex keep the owner's tid in the futex word itself (`FUTEX_TID_MASK`), with `FUTEX_OWNER_DIED` and
/// `FUTEX_WAITERS` above it. The tids are the process's own (its pid namespace); `resolveThread` turns one into the
/// thread stallwatch sees, or nil when the process has no such live thread.
public enum LockOwnerReader {
    /// The owner, or why none is named.
    public enum Owner: Equatable, Sendable {
        /// A live thread of the process (as stallwatch numbers it).
        case thread(Int32)
        case unknown(String)
    }

    /// `FUTEX_TID_MASK`, `FUTEX_OWNER_DIED`.
    static let tidMask: UInt32 = 0x3FFF_FFFF
    static let ownerDied: UInt32 = 0x4000_0000
    /// glibc's `__kind` bits: the type (0–3), robust, priority inheritance, priority protection, process-shared,
    /// elision on and off. Anything else is no mutex's kind.
    static let validKindBits: UInt32 = 0x3 | 0x10 | 0x20 | 0x40 | 0x80 | 0x100 | 0x200
    static let robustBit: UInt32 = 0x10
    static let priorityInheritanceBit: UInt32 = 0x20
    /// glibc's `PTHREAD_MUTEX_INCONSISTENT` and `PTHREAD_MUTEX_NOTRECOVERABLE` in `__owner`.
    static let inconsistent: Int32 = 0x7FFF_FFFF
    static let notRecoverable: Int32 = 0x7FFF_FFFE
    /// `PID_MAX_LIMIT` on 64-bit Linux: no tid is larger.
    static let largestTid: Int32 = 4_194_304

    /// The owner of the lock of `kind` whose futex word is at `address`, that `waiter` waits on; and the kind, made
    /// more precise where the mutex's own kind says so (a robust mutex).
    public static func owner(
        of kind: LockKind, address: UInt64, waiter: Int32, memory: some ProcessMemoryReader,
        resolveThread: (Int32) -> Int32?
    ) -> (kind: LockKind, owner: Owner) {
        switch kind {
        case .mutex, .robustMutex:
            // A normal mutex locked twice by one thread waits for itself (a deadlock of one thread): the owner may be
            // the waiter.
            return mutexOwner(address: address, memory: memory, resolveThread: resolveThread)
        case .piMutex, .piFutex:
            return (kind, wordOwner(address: address, waiter: waiter, memory: memory, resolveThread: resolveThread))
        case .threadJoin:
            return (kind, joinedThread(address: address, waiter: waiter, memory: memory, resolveThread: resolveThread))
        case .conditionVariable, .rwlock, .semaphore, .libcLock, .futex:
            return (kind, .unknown(noOwnerNote(kind)))
        }
    }

    /// What a report says for a kind without an owner.
    static func noOwnerNote(_ kind: LockKind) -> String {
        switch kind {
        case .conditionVariable: "a condition variable has no owner: the thread waits for another to signal it"
        case .rwlock:
            "a rwlock records no owner of its read locks, and which word the thread waits on does not say where its"
                + " writer's tid is: none is named"
        case .semaphore: "a semaphore has no owner: the thread waits for another to signal it"
        case .libcLock: "libc records no owner of its internal locks"
        default: "which lock this futex belongs to is not known, so no owner is named"
        }
    }

    static func mutexOwner(
        address: UInt64, memory: some ProcessMemoryReader, resolveThread: (Int32) -> Int32?
    ) -> (kind: LockKind, owner: Owner) {
        let hex = "0x" + String(address, radix: 16)
        guard address != 0, address % 8 == 0 else {
            return (.mutex, .unknown("the futex word at \(hex) cannot start a pthread_mutex_t (not 8-byte aligned)"))
        }
        let words: [UInt64]
        do {
            words = try [address, address + 8, address + 16].map { (at: UInt64) throws(MemoryReadError) in
                try memory.word(at: at)
            }
        } catch {
            return (.mutex, .unknown("the mutex at \(hex) could not be read (\(describe(error)))"))
        }
        let lock = UInt32(truncatingIfNeeded: words[0])
        let owner = Int32(truncatingIfNeeded: words[1])
        let kindBits = UInt32(truncatingIfNeeded: words[2])
        guard kindBits & ~validKindBits == 0, kindBits & priorityInheritanceBit == 0 else {
            return (.mutex, .unknown("the memory at \(hex) is no glibc mutex (its kind word is \(kindBits))"))
        }
        let robust = kindBits & robustBit != 0
        let kind: LockKind = robust ? .robustMutex : .mutex
        guard lock != 0 else { return (kind, .unknown("the mutex was free when read: its holder had just let go")) }
        if robust, owner == inconsistent || owner == notRecoverable {
            return (kind, .unknown("its owner died holding it (the robust mutex is inconsistent)"))
        }
        guard owner != 0 else { return (kind, .unknown("the mutex records no owner yet (it is changing hands)")) }
        guard owner > 0, owner <= largestTid else {
            return (kind, .unknown("the mutex's owner field holds \(owner), which is no thread id"))
        }
        // A robust mutex's word holds the owner's tid too: the two must agree.
        if robust, lock & tidMask != UInt32(owner) {
            return (kind, .unknown("the robust mutex's futex word and owner field disagree"))
        }
        guard let thread = resolveThread(owner) else {
            return (kind, .unknown("the mutex's owner field names tid \(owner), no live thread of this process"))
        }
        return (kind, .thread(thread))
    }

    /// The tid in a 32-bit futex word, read as part of its aligned 8-byte word (which never crosses a page).
    static func futexWord(at address: UInt64, memory: some ProcessMemoryReader) throws(MemoryReadError) -> UInt32 {
        let word = try memory.word(at: address & ~7)
        return UInt32(truncatingIfNeeded: address & 4 == 0 ? word : word >> 32)
    }

    static func wordOwner(
        address: UInt64, waiter: Int32, memory: some ProcessMemoryReader, resolveThread: (Int32) -> Int32?
    ) -> Owner {
        let hex = "0x" + String(address, radix: 16)
        guard address != 0, address % 4 == 0 else { return .unknown("the futex word at \(hex) is misaligned") }
        let word: UInt32
        do {
            word = try futexWord(at: address, memory: memory)
        } catch {
            return .unknown("the futex word at \(hex) could not be read (\(describe(error)))")
        }
        let tid = Int32(bitPattern: word & tidMask)
        guard tid != 0 else {
            return .unknown(
                word & ownerDied != 0
                    ? "its owner died holding it" : "the lock was free when read: its holder had just let go")
        }
        guard let thread = resolveThread(tid) else {
            return .unknown("the futex word names tid \(tid), no live thread of this process")
        }
        // The kernel refuses a PI lock to the thread that holds it (EDEADLK): a word naming the waiter is stale.
        guard thread != waiter else { return .unknown("the futex word names the waiting thread itself") }
        return .thread(thread)
    }

    static func joinedThread(
        address: UInt64, waiter: Int32, memory: some ProcessMemoryReader, resolveThread: (Int32) -> Int32?
    ) -> Owner {
        let hex = "0x" + String(address, radix: 16)
        guard address != 0, address % 4 == 0 else { return .unknown("the futex word at \(hex) is misaligned") }
        let word: UInt32
        do {
            word = try futexWord(at: address, memory: memory)
        } catch {
            return .unknown("the joined thread's tid at \(hex) could not be read (\(describe(error)))")
        }
        // The kernel clears the word when the thread exits (CLONE_CHILD_CLEARTID).
        let tid = Int32(bitPattern: word)
        guard tid != 0 else { return .unknown("the joined thread had just exited") }
        guard tid > 0, tid <= largestTid, let thread = resolveThread(tid), thread != waiter else {
            return .unknown("the word the join waits on holds \(tid), no other live thread of this process")
        }
        return .thread(thread)
    }

    /// Why a read failed, in words.
    static func describe(_ error: MemoryReadError) -> String {
        switch error.errno {
        case 1: "reading it was not permitted"
        case 3: "the process is gone"
        case 14: "nothing is mapped there"
        case 0: "a short read"
        default: "errno \(error.errno)"
        }
    }
}
