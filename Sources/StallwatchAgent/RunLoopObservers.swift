// The only CoreFoundation code in stallwatch: two observers on the main run loop that publish its activity.
import CoreFoundation
import StallwatchCore

/// Installs the observers that feed the ``ActivityBoard``.
///
/// Two observers, as Tencent Matrix does: one ordered first, one ordered last. The first publishes every
/// activity as soon as CoreFoundation reports it; the last publishes `beforeWaiting` only after every other
/// observer has run, as `sleeping`. A stall inside another `beforeWaiting` observer therefore stays at
/// `beforeWaiting` (busy) instead of looking like sleep.
///
/// They are added in the common modes: default and any mode the program adds to the common set. A run loop
/// run in a private mode (a nested modal loop) is not observed; see the README's limitations.
enum RunLoopObservers {
    /// `beforeTimers` is not observed: the loop reaches `beforeSources` right after it, and leaving it out
    /// saves one observer call-out per iteration on a busy loop.
    private static let firstActivities: CFRunLoopActivity = [
        .entry, .beforeSources, .beforeWaiting, .afterWaiting, .exit,
    ]
    private static let lastActivities: CFRunLoopActivity = [.beforeWaiting]

    /// Adds both observers to the main run loop. Safe to call from any thread.
    static func install() -> [CFRunLoopObserver] {
        let mainLoop = CFRunLoopGetMain()
        var observers: [CFRunLoopObserver] = []
        if let first = CFRunLoopObserverCreate(nil, firstActivities.rawValue, true, CFIndex.min, publishFirst, nil) {
            observers.append(first)
        }
        if let last = CFRunLoopObserverCreate(nil, lastActivities.rawValue, true, CFIndex.max, publishLast, nil) {
            observers.append(last)
        }
        for observer in observers {
            CFRunLoopAddObserver(mainLoop, observer, kCFRunLoopCommonModes)
        }
        return observers
    }

    /// Removes the observers so the main thread no longer publishes.
    static func remove(_ observers: [CFRunLoopObserver]) {
        for observer in observers {
            CFRunLoopObserverInvalidate(observer)
        }
    }
}

private func publishFirst(_: CFRunLoopObserver?, _ activity: CFRunLoopActivity, _: UnsafeMutableRawPointer?) {
    let board = ActivityBoard.shared
    switch activity {
    case .beforeSources: board.publish(.beforeSources, precise: false)
    case .afterWaiting: board.publish(.afterWaiting, precise: true)
    case .beforeWaiting: board.publish(.beforeWaiting, precise: true)
    case .entry: board.publish(.entry, precise: true)
    case .exit: board.publish(.exit, precise: true)
    default: break
    }
}

private func publishLast(_: CFRunLoopObserver?, _: CFRunLoopActivity, _: UnsafeMutableRawPointer?) {
    ActivityBoard.shared.publish(.sleeping, precise: true)
}
