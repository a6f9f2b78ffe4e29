// Observers that do nothing, on the activities the agent observes: what CoreFoundation's observer dispatch
// alone costs a loop, the floor under any observer-based watcher.
//
// CoreFoundation skips an activity no observer asked for; once one did, each occurrence locks the mode,
// collects and retains the observers and calls out, whatever the call-out then does. Comparing this variant
// with a watched run separates that cost from the agent's own work.
//
// One idle thread too, parked for the process's life, as the agent's watcher thread mostly is: a second thread makes
// glibc take its multi-threaded paths on the main thread (cancellation bookkeeping around every ppoll, two per loop
// iteration; the slower mutex unlock), which any in-process watcher brings and which is not the agent's own code.
import CoreFoundation
import Foundation

enum EmptyObservers {
    /// The agent's observer set on the main loop under `stallwatch run` (StallwatchAgent's `RunLoopObservers`, when
    /// the preloaded agent's `CFRunLoopRunSpecific` gives it `entry` and `exit`): a first observer for waiting and
    /// waking, and a last one for `beforeWaiting`. Keep in step with it.
    static func install() {
        let first: CFRunLoopActivity = [.beforeWaiting, .afterWaiting]
        let observers = [
            CFRunLoopObserverCreate(nil, first.rawValue, true, CFIndex.min, { _, _, _ in }, nil),
            CFRunLoopObserverCreate(
                nil, CFRunLoopActivity.beforeWaiting.rawValue, true, CFIndex.max, { _, _, _ in }, nil),
        ]
        for observer in observers {
            CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes)
        }
        let parked = Thread { while true { sleep(3600) } }
        parked.start()
    }
}
