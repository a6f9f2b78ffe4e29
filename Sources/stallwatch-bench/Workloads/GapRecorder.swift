// The capture target that measures from inside how long its main thread is stopped.
//
// A tracer's own clock says how long it held the thread; the thread's clock says how long it could not run,
// which also counts the time to be scheduled again after the tracer let go. The main thread spins in a timer
// callout (so its stack has the run-loop frames a real stall has) and notes every jump in CLOCK_MONOTONIC
// longer than `threshold`: while it is stopped, its clock readings stop too. SIGUSR1 ends the spin early, so a
// driver that cannot know how long its measurements take can start it long and stop it when done.
import CoreFoundation
import Foundation
import Synchronization

enum GapRecorder {
    /// Shorter jumps are the spin loop's own variation, not a stop.
    static let threshold: UInt64 = 5_000
    static let capacity = 262_144
    static let readyLine = "stallwatch-bench: spinning"
    private static let gapPrefix = "stallwatch-bench: gap "
    /// Ends the spin before its time is up; the gaps are printed as usual.
    static let stopSignal = SIGUSR1
    /// Set by the ``stopSignal`` handler (a lock-free store, safe in a signal handler), read by the spin.
    private static let stopRequested = Atomic<Bool>(false)

    /// A jump in the main thread's clock: the last reading before it and its length.
    struct Gap {
        let start: UInt64
        let length: UInt64

        var line: String { "\(GapRecorder.gapPrefix)start_ns=\(start) length_ns=\(length)" }
    }

    /// Between two spins of ``run(seconds:stalls:)``: the loop sleeps, so each spin is a stall of its own.
    static let pause = 0.3

    /// Spins in a timer callout for `seconds` (or until ``stopSignal``), `stalls` times ``pause`` apart, printing
    /// ``readyLine`` as the first spin starts; then prints the gaps of every spin.
    static func run(seconds: Double, stalls: Int = 1) {
        let recording = Recording()
        defer { recording.gaps.deallocate() }
        _ = stopRequested.load(ordering: .relaxed)  // initialized before the handler can run
        signal(stopSignal) { _ in GapRecorder.stopRequested.store(true, ordering: .relaxed) }
        recording.remaining = stalls
        scheduleSpin(after: 0.05, seconds: seconds, recording: recording)
        let end = Date(timeIntervalSinceNow: Double(stalls) * (seconds + pause) + 0.2)
        while !recording.finished, end.timeIntervalSinceNow > 0 {
            _ = RunLoop.main.run(mode: .default, before: end)
        }
        let report = recording.gaps.prefix(recording.count).map(\.line).joined(separator: "\n")
        FileHandle.standardOutput.write(Data((report + "\n").utf8))
    }

    /// One spin in a timer callout `delay` seconds from now, and the next one after it while any remain.
    private static func scheduleSpin(after delay: Double, seconds: Double, recording: Recording) {
        let timer = Timer(fire: Date(timeIntervalSinceNow: delay), interval: 0, repeats: false) { _ in
            if !recording.started { FileHandle.standardOutput.write(Data((readyLine + "\n").utf8)) }
            recording.started = true
            let free = UnsafeMutableBufferPointer(rebasing: recording.gaps[recording.count...])
            recording.count += spin(until: MonotonicClock.now() + UInt64(seconds * 1e9), into: free)
            recording.remaining -= 1
            if recording.remaining > 0, !stopRequested.load(ordering: .relaxed) {
                scheduleSpin(after: pause, seconds: seconds, recording: recording)
            } else {
                recording.finished = true
                CFRunLoopStop(CFRunLoopGetCurrent())
            }
        }
        RunLoop.main.add(timer, forMode: .common)
    }

    /// Reads the clock in a tight loop until `deadline` or a stop request, noting each jump; returns how many
    /// it noted.
    @inline(never)
    private static func spin(until deadline: UInt64, into gaps: UnsafeMutableBufferPointer<Gap>) -> Int {
        var count = 0
        var previous = MonotonicClock.now()
        while previous < deadline, !stopRequested.load(ordering: .relaxed) {
            let now = MonotonicClock.now()
            if now - previous > threshold, count < gaps.count {
                gaps[count] = Gap(start: previous, length: now - previous)
                count += 1
            }
            previous = now
        }
        return count
    }

    /// Parses the gaps from the target's output.
    static func gaps(in output: String) -> [Gap] {
        output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(gapPrefix) else { return nil }
            let values = line.dropFirst(gapPrefix.count).split(separator: " ").compactMap {
                $0.split(separator: "=").last.flatMap { UInt64($0) }
            }
            return values.count == 2 ? Gap(start: values[0], length: values[1]) : nil
        }
    }

    /// The gaps the callout noted, preallocated so the spin never allocates.
    private final class Recording: @unchecked Sendable {
        // @unchecked: only the main thread touches it, in the timer callout and after the loop returns.
        let gaps = UnsafeMutableBufferPointer<Gap>.allocate(capacity: GapRecorder.capacity)
        var count = 0
        var remaining = 1
        var started = false
        var finished = false
    }
}
