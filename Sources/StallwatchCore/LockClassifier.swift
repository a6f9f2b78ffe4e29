// Which kind of lock a futex wait is: the futex operation says PI or not, the waiting thread's innermost libc frames
// say mutex, condition variable, rwlock, semaphore or join.

/// Tells a mutex from a condition variable and the rest, without reading the workload's memory.
///
/// A plain `FUTEX_WAIT` looks the same whoever calls it; only the caller tells a mutex (`__lll_lock_wait` under
/// `pthread_mutex_lock`) from a condition variable's sequence word. Names are compared whole, after dropping leading
/// underscores and a trailing `64` (glibc's 64-bit-time variants), so a function of the program's own that merely
/// starts like one is not taken for it. Without frames (no stack captured) a plain wait stays an unknown futex: no
/// owner is read from memory whose layout is not known.
public enum LockClassifier {
    /// How many of the innermost frames may hold the libc function that waits.
    static let framesSearched = 8

    static let mutexFunctions: Set<String> = [
        "pthread_mutex_lock", "pthread_mutex_timedlock", "pthread_mutex_clocklock", "pthread_mutex_lock_full",
        "pthread_mutex_cond_lock", "pthread_mutex_cond_lock_full", "pthread_mutex_clocklock_common",
        "lll_lock_wait", "lll_clocklock_wait",
    ]
    static let conditionFunctions: Set<String> = [
        "pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait", "pthread_cond_wait_common",
    ]
    static let rwlockFunctions: Set<String> = [
        "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
        "pthread_rwlock_clockrdlock", "pthread_rwlock_clockwrlock", "pthread_rwlock_rdlock_full",
        "pthread_rwlock_wrlock_full",
    ]
    static let semaphoreFunctions: Set<String> = [
        "sem_wait", "sem_timedwait", "sem_clockwait", "new_sem_wait_slow", "new_sem_wait",
        "dispatch_semaphore_wait", "dispatch_semaphore_wait_slow", "dispatch_sema4_wait",
    ]
    static let joinFunctions: Set<String> = [
        "pthread_join", "pthread_timedjoin_np", "pthread_clockjoin_np", "pthread_clockjoin_ex", "pthread_join_common",
    ]

    /// The kind of lock a thread waits on with `operation`, its stack's innermost frames being `frames`.
    public static func kind(operation: FutexOperation, frames: [Frame]) -> LockKind {
        let names = frames.prefix(framesSearched).compactMap { $0.symbol.map(normalized) }
        if operation.locksPriorityInheritance {
            return names.contains(where: mutexFunctions.contains) ? .piMutex : .piFutex
        }
        if operation.waitsRequeuePriorityInheritance { return .conditionVariable }
        guard operation.isPlainWait else { return .futex }
        for name in names {
            if name == "lll_lock_wait_private" { return .libcLock }
            if mutexFunctions.contains(name) { return .mutex }
            if conditionFunctions.contains(name) { return .conditionVariable }
            if rwlockFunctions.contains(name) { return .rwlock }
            if semaphoreFunctions.contains(name) { return .semaphore }
            if joinFunctions.contains(name) { return .threadJoin }
        }
        return .futex
    }

    /// `___pthread_mutex_lock` → `pthread_mutex_lock`, `__futex_abstimed_wait_common64` → `futex_abstimed_wait_common`,
    /// `__new_sem_wait_slow64.constprop.0` → `new_sem_wait_slow` (GCC's clones: `.constprop.N`, `.isra.N`, `.part.N`).
    static func normalized(_ symbol: String) -> String {
        var name = Substring(symbol.drop { $0 == "_" })
        if let dot = name.firstIndex(of: ".") { name = name[..<dot] }
        if name.hasSuffix("64") { name = name.dropLast(2) }
        return String(name)
    }
}
