// A faithful re-creation of the classic stall detector, installed in-process for comparison.
//
// As iOS practice has it: one observer for every activity, in the common modes, stores the activity and
// signals a semaphore on each one; a watcher thread waits on the semaphore with an 80 ms timeout, and three
// timeouts in a row while the loop is in beforeSources or afterWaiting make a stall. The main thread pays for
// a semaphore signal on every activity; that is the cost stallwatch's design removes.
import CoreFoundation
import Dispatch
import Foundation
import Synchronization

final class ClassicDetector: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let activity = Atomic<UInt>(0)
    /// Stands in for the classic detector's stack capture, which the benchmark leaves out; counting keeps the
    /// branch that would capture from being optimized away.
    private let stalls = Atomic<Int>(0)

    /// Installs the observer on the main run loop and starts the watcher thread, both for the process's life.
    static func install() {
        let detector = ClassicDetector()
        var context = CFRunLoopObserverContext()
        // Retained once and never released: the observer, and so its callback, lives as long as the process.
        context.info = Unmanaged.passRetained(detector).toOpaque()
        let observer = CFRunLoopObserverCreate(
            kCFAllocatorDefault, CFRunLoopActivity.allActivities.rawValue, true, 0,
            { _, activity, info in
                let detector = Unmanaged<ClassicDetector>.fromOpaque(info!).takeUnretainedValue()
                detector.activity.store(activity.rawValue, ordering: .relaxed)
                detector.semaphore.signal()
            }, &context)
        CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes)
        let watcher = Thread { detector.watch() }
        watcher.name = "classic-watcher"
        watcher.start()
    }

    private func watch() {
        let busy = [CFRunLoopActivity.beforeSources.rawValue, CFRunLoopActivity.afterWaiting.rawValue]
        var timeouts = 0
        while true {
            if semaphore.wait(timeout: .now() + .milliseconds(80)) == .timedOut,
                busy.contains(activity.load(ordering: .relaxed))
            {
                timeouts += 1
                if timeouts < 3 { continue }
                stalls.add(1, ordering: .relaxed)
            }
            timeouts = 0
        }
    }
}
