// The functions that stall the main thread, each a few calls below the run-loop callout, named for what they "do".
//
// Every one is `@inline(never)` so it keeps its own frame, and the CPU burners do real arithmetic whose result
// flows back up the chain into `WorkResults`, so neither the optimizer nor tail calls can make a frame vanish.
import Foundation
import Synchronization

/// Where finished work goes, so the optimizer must keep the arithmetic that produced it.
enum WorkResults {
    static let latest = Atomic<UInt64>(0)

    static func keep(_ value: UInt64) { latest.store(value, ordering: .relaxed) }
}

/// How many iterations a CPU burner runs between looks at the clock (about a millisecond): the clock stays a
/// negligible share of stack samples, so a sample lands in the culprit, not in the clock helper.
private let iterationsPerClockCheck = 262_144

// MARK: cpu

enum ReportRenderer {
    @inline(never)
    static func renderMonthlyReport(until deadline: MonotonicInstant) -> UInt64 {
        layoutAllPages(until: deadline) &+ 1
    }

    @inline(never)
    static func layoutAllPages(until deadline: MonotonicInstant) -> UInt64 {
        ChecksumEngine.crunchChecksums(until: deadline) ^ 0x5A
    }
}

enum ChecksumEngine {
    /// FNV-1a over a byte counter until `deadline`.
    @inline(never)
    static func crunchChecksums(until deadline: MonotonicInstant) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var byte: UInt64 = 0
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                hash = (hash ^ (byte & 0xFF)) &* 0x0000_0100_0000_01B3
                byte &+= 1
                iteration += 1
            }
        } while !deadline.hasPassed
        return hash
    }
}

// MARK: sleep

enum SettingsLoader {
    @inline(never)
    static func reloadSettings(taking duration: Duration) -> UInt64 {
        DiskCache.readSettingsBlock(taking: duration) &+ 1
    }
}

enum DiskCache {
    static let blockSize: UInt64 = 4096

    @inline(never)
    static func readSettingsBlock(taking duration: Duration) -> UInt64 {
        waitForSlowDisk(for: duration) ? blockSize : 0
    }

    /// Sleeps in one `usleep` call, so anything that interrupts the sleep shortens the measured stall.
    ///
    /// - Returns: Whether the whole sleep elapsed; looking at it keeps `usleep` from being a tail call, which
    ///   would take this frame off the stack in optimized builds.
    @inline(never)
    static func waitForSlowDisk(for duration: Duration) -> Bool {
        usleep(useconds_t(duration.nanoseconds / 1000)) == 0
    }
}

// MARK: main-queue

enum PhotoGallery {
    @inline(never)
    static func refreshGallery(until deadline: MonotonicInstant) -> UInt64 {
        ThumbnailDecoder.decodeAllThumbnails(until: deadline) &* 3
    }
}

enum ThumbnailDecoder {
    /// Sums the luma of pseudo-random RGB pixels until `deadline`.
    @inline(never)
    static func decodeAllThumbnails(until deadline: MonotonicInstant) -> UInt64 {
        var pixel: UInt64 = 0x1234_5678
        var luma: UInt64 = 0
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                pixel = pixel &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                luma &+= (77 &* (pixel >> 40 & 0xFF) &+ 150 &* (pixel >> 48 & 0xFF) &+ 29 &* (pixel >> 56)) >> 8
                iteration += 1
            }
        } while !deadline.hasPassed
        return luma
    }
}

// MARK: source

enum InboxConnection {
    @inline(never)
    static func handleIncomingSignal(until deadline: MonotonicInstant) -> UInt64 {
        MessagePump.drainInbox(until: deadline) | 1
    }
}

enum MessagePump {
    /// Scrambles message words with xorshift until `deadline`.
    @inline(never)
    static func drainInbox(until deadline: MonotonicInstant) -> UInt64 {
        var word: UInt64 = 0x9E37_79B9_7F4A_7C15
        var digest: UInt64 = 0
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                word ^= word << 13
                word ^= word >> 7
                word ^= word << 17
                digest &+= word
                iteration += 1
            }
        } while !deadline.hasPassed
        return digest
    }
}

// MARK: mutex

enum AccountsView {
    @inline(never)
    static func refreshBalances(from store: AccountStore) {
        store.waitForAccountLock()
    }
}

/// Accounts shared between the main thread and a background sync that holds their lock for a long time.
final class AccountStore: Sendable {
    static let shared = AccountStore()

    private let lock = NSLock()
    /// Signalled by the main thread just before it blocks, so the sync holds the lock for the stall's full length.
    private let mainThreadIsWaiting = DispatchSemaphore(value: 0)

    /// Blocks the main thread on the lock the background sync holds.
    @inline(never)
    func waitForAccountLock() {
        mainThreadIsWaiting.signal()
        lock.lock()
        lock.unlock()
    }

    /// Takes the lock, waits for the main thread to block on it, then keeps it for `duration`.
    @inline(never)
    func syncInBackground(holdingLockFor duration: Duration) {
        lock.lock()
        mainThreadIsWaiting.wait()
        usleep(useconds_t(duration.nanoseconds / 1000))
        lock.unlock()
    }
}

// MARK: vdso

enum AnimationDriver {
    @inline(never)
    static func renderFrame(until deadline: MonotonicInstant) -> UInt64 {
        FrameClock.spinUntilNextFrame(until: deadline) &+ 1
    }
}

enum FrameClock {
    /// Polls `clock_gettime` in a tight loop until `deadline`, so the thread spends the stall inside the vDSO.
    ///
    /// It calls `clock_gettime` itself, not `MonotonicInstant.now()`, so no demo frame sits between it and the vDSO.
    @inline(never)
    static func spinUntilNextFrame(until deadline: MonotonicInstant) -> UInt64 {
        var now = timespec()
        var polls: UInt64 = 0
        repeat {
            clock_gettime(CLOCK_MONOTONIC, &now)
            polls &+= 1
        } while Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) < deadline.nanoseconds
        return polls
    }
}

// MARK: observer

enum LayoutEngine {
    @inline(never)
    static func flushPendingLayout(until deadline: MonotonicInstant) -> UInt64 {
        LayoutObserver.recomputeLayoutBeforeSleep(until: deadline) &+ 7
    }
}

enum LayoutObserver {
    /// Relaxes floating-point view frames toward their constraints until `deadline`.
    @inline(never)
    static func recomputeLayoutBeforeSleep(until deadline: MonotonicInstant) -> UInt64 {
        var width = 320.0
        var height = 480.0
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                width = width * 0.999_9 + height * 0.000_1 + 0.5
                height = height * 0.999_8 + width * 0.000_2 - 0.25
                iteration += 1
            }
        } while !deadline.hasPassed
        return (width + height).bitPattern
    }
}

// MARK: two-phase

enum ImportPipeline {
    /// One stall made of two steps: parsing for five sixths of it, then indexing for the last sixth. A
    /// detector that keeps one stack shows whichever step it caught; the dominant one is `parseRecords`.
    @inline(never)
    static func importBatch(from start: MonotonicInstant, until deadline: MonotonicInstant) -> UInt64 {
        let parsingEnds = start + (deadline - start) * 5 / 6
        return parseRecords(until: parsingEnds) ^ writeIndex(until: deadline)
    }

    /// Tokenizes a synthetic record stream until `deadline`.
    @inline(never)
    static func parseRecords(until deadline: MonotonicInstant) -> UInt64 {
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                iteration += 1
            }
        } while !deadline.hasPassed
        return state
    }

    /// Builds a synthetic index until `deadline`.
    @inline(never)
    static func writeIndex(until deadline: MonotonicInstant) -> UInt64 {
        var sum: UInt64 = 1
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                sum = sum &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                iteration += 1
            }
        } while !deadline.hasPassed
        return sum
    }
}

// MARK: modal

enum ModalSession {
    /// The private run-loop mode of the modal session: not one of the common modes.
    static let mode = RunLoop.Mode("com.stallwatch.demo.modal")

    /// Runs a nested run loop in the private mode for `length`, as a modal dialog does, kept busy by a 20 ms
    /// timer (so it wakes often and stays responsive); `work`, if any, runs from a timer in that mode
    /// `delay` into the session. Returns how long the session lasted.
    @inline(never)
    static func runResponsiveSession(
        lasting length: Duration, after delay: Duration = .zero, _ work: (@Sendable () -> Void)? = nil
    ) -> Duration {
        let start = MonotonicInstant.now()
        let end = start + length
        let heartbeat = Timer(fire: Date(), interval: 0.02, repeats: true) { _ in WorkResults.keep(1) }
        RunLoop.current.add(heartbeat, forMode: mode)
        if let work {
            RunLoop.current.add(
                Timer(fire: (start + delay).date, interval: 0, repeats: false) { _ in work() }, forMode: mode)
        }
        while !end.hasPassed {
            _ = RunLoop.current.run(mode: mode, before: end.date)
        }
        heartbeat.invalidate()
        return MonotonicInstant.now() - start
    }

    /// Checks synthetic form fields until `deadline`: the stall inside the modal session.
    @inline(never)
    static func validateFormFields(until deadline: MonotonicInstant) -> UInt64 {
        var checksum: UInt64 = 7
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                checksum = (checksum &* 31) ^ UInt64(truncatingIfNeeded: iteration)
                iteration += 1
            }
        } while !deadline.hasPassed
        return checksum
    }
}

// MARK: dispatch-main

enum SyncEngine {
    @inline(never)
    static func applyRemoteChanges(until deadline: MonotonicInstant) -> UInt64 {
        mergeChanges(until: deadline) &+ 3
    }

    /// Merges synthetic change sets until `deadline`, on the main queue of a program with no run loop.
    @inline(never)
    static func mergeChanges(until deadline: MonotonicInstant) -> UInt64 {
        var merged: UInt64 = 0x1234_5678
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                merged = merged &* 2_862_933_555_777_941_757 &+ 3_037_000_493
                iteration += 1
            }
        } while !deadline.hasPassed
        return merged
    }
}

// MARK: hiccups

enum HiccupRenderer {
    /// Burns CPU for `length`: a callout too short to be a stall, repeated often enough to feel janky.
    @inline(never)
    static func redrawEverything(for length: Duration) -> UInt64 {
        let deadline = MonotonicInstant.now() + length
        var pixels: UInt64 = 1
        repeat {
            var iteration = 0
            while iteration < iterationsPerClockCheck {
                pixels = pixels &* 1_103_515_245 &+ 12_345
                iteration += 1
            }
        } while !deadline.hasPassed
        return pixels
    }
}
