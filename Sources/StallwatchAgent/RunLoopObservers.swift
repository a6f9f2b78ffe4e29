// The only CoreFoundation code in stallwatch: two observers on the main run loop that publish its activity.
import CStallwatchAgentSupport
import CoreFoundation
import StallwatchCore

/// Installs the observers that feed the ``ActivityBoard``.
///
/// Two observers, as Tencent Matrix does: one ordered first, one ordered last. The first publishes every
/// activity as soon as CoreFoundation reports it; the last publishes `beforeWaiting` only after every other
/// observer has run, as `sleeping`. A stall inside another `beforeWaiting` observer therefore stays at
/// `beforeWaiting` (busy) instead of looking like sleep.
///
/// They are added in the common modes (default and any mode the program adds to the common set), and the
/// ``ModeTracker`` adds them to private modes as they appear, so a nested run loop in a private mode (a
/// modal session) is observed too.
enum RunLoopObservers {
    /// `beforeTimers` is not observed: the loop reaches `beforeSources` right after it, and leaving it out
    /// saves one observer call-out per iteration on a busy loop.
    static let firstActivities: CFRunLoopActivity = [
        .entry, .beforeSources, .beforeWaiting, .afterWaiting, .exit,
    ]
    static let lastActivities: CFRunLoopActivity = [.beforeWaiting]

    /// Adds both observers to the main run loop. Safe to call from any thread.
    ///
    /// Adds none once the main thread has exited (`dispatchMain()`, an async `main`): the loop will never run, and
    /// CoreFoundation would print a complaint into the workload's stderr. The watcher pings the main queue instead.
    static func install() -> [CFRunLoopObserver] {
        guard sw_agent_main_thread_exited() == 0 else { return [] }
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

/// Adds the observers to run-loop modes that appear after they were installed.
///
/// A private mode (`RunLoop.current.run(mode: .init("modal"), before:)`) is not in the common set, so
/// observers added to the common modes never hear from it: while the main thread runs a nested loop in it,
/// the last published state is the callout that started the loop, and a responsive modal session would look
/// like a stall. The watcher calls ``refresh()`` on every wake; a mode seen for the first time gets both
/// observers, then the main run loop is woken (harmless: a wake-up with nothing to do just loops) so that a
/// nested loop already asleep in that mode publishes its state at once.
final class ModeTracker: @unchecked Sendable {
    private let observers: [CFRunLoopObserver]
    private var known: Set<String> = []

    /// Takes the modes the main loop has now as observed (adding the observers to those outside the common
    /// modes), so that only modes appearing later need the main loop: a first refresh after the main thread exited
    /// has nothing to add.
    init(observers: [CFRunLoopObserver]) {
        self.observers = observers
        guard !observers.isEmpty, sw_agent_main_thread_exited() == 0 else { return }
        _ = addObserversToNewModes()
    }

    /// Observes modes not seen before. Returns true if there were any: the published state may be stale
    /// until the main thread has gone through its next transition.
    func refresh() -> Bool {
        // Nothing to observe, or a main thread gone for good: touching its loop would only make CoreFoundation
        // print into the workload's stderr.
        guard !observers.isEmpty, sw_agent_main_thread_exited() == 0 else { return false }
        let added = addObserversToNewModes()
        if added {
            // A loop may already be running in the new mode, entered before it had observers.
            RunLoopModes.modesChanged.store(true, ordering: .releasing)
            CFRunLoopWakeUp(CFRunLoopGetMain())
        }
        return added
    }

    private func addObserversToNewModes() -> Bool {
        let mainLoop = CFRunLoopGetMain()
        guard let modes = CFRunLoopCopyAllModes(mainLoop) else { return false }
        var added = false
        for index in 0..<CFArrayGetCount(modes) {
            guard let pointer = CFArrayGetValueAtIndex(modes, index) else { continue }
            let mode = unsafeBitCast(pointer, to: CFString.self)
            let name = Self.name(of: mode)
            guard !known.contains(name) else { continue }
            known.insert(name)
            for observer in observers {
                CFRunLoopAddObserver(mainLoop, observer, mode)
            }
            added = true
        }
        return added
    }

    static func name(of mode: CFString) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard CFStringGetCString(mode, &buffer, buffer.count, CFStringBuiltInEncodings.UTF8.rawValue) else {
            return String(describing: mode)
        }
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Main-thread state: where the thread is among nested and pumped loops.
nonisolated(unsafe) private var nesting = RunLoopNesting()

private func publishFirst(_: CFRunLoopObserver?, _ activity: CFRunLoopActivity, _: UnsafeMutableRawPointer?) {
    switch activity {
    case .beforeSources: publish(.beforeSources, precise: false)
    case .afterWaiting: publish(.afterWaiting, precise: true)
    case .beforeWaiting: publish(.beforeWaiting, precise: true)
    case .entry: publish(.entry, precise: true)
    case .exit: publish(.exit, precise: true)
    default: break
    }
}

private func publishLast(_: CFRunLoopObserver?, _: CFRunLoopActivity, _: UnsafeMutableRawPointer?) {
    publish(.sleeping, precise: true)
}

/// Moves the nesting model and publishes where it says the thread is. Only `entry` (and a repair, rare) asks
/// CoreFoundation for the current mode; the hot `beforeSources` costs one relaxed load more than before.
@inline(__always)
private func publish(_ activity: RunLoopNesting.Activity, precise: Bool) {
    if activity != .entry, activity != .exit {
        let repair =
            RunLoopModes.modesChanged.load(ordering: .relaxed)
            && RunLoopModes.modesChanged.exchange(false, ordering: .acquiring)
        if repair || nesting.needsMode(for: activity) { nesting.resynchronize(mode: RunLoopModes.currentIndex()) }
    }
    let state = nesting.apply(activity, mode: activity == .entry ? RunLoopModes.currentIndex() : 0)
    ActivityBoard.shared.publish(state.phase, mode: state.mode, precise: precise)
}
