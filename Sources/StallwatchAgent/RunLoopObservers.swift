// The only CoreFoundation code in stallwatch: two observers on the main run loop that publish its activity.
import CStallwatchAgentSupport
import CoreFoundation
import Foundation
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
    /// The main loop's first observer. Neither `beforeTimers` nor `beforeSources`: they come once per iteration, even
    /// on a loop that never sleeps, and CoreFoundation's dispatch of one (mode unlocked and relocked, observers
    /// collected and retained, the call-out) costs a tight loop more than half an iteration, whatever the call-out
    /// does. Once an observer asks for an activity in a mode, every iteration in that mode pays for it: CoreFoundation
    /// never clears the mode's mask. A loop that keeps running callouts without sleeping is asked for progress instead
    /// (``MainLoopObservation/postProgressProbe()``), once the watcher's reading is a few milliseconds old.
    static let firstActivities: CFRunLoopActivity = [.entry, .beforeWaiting, .afterWaiting, .exit]
    /// Loop threads (`--thread`) publish `beforeSources` still: their watcher does not probe them.
    static let loopThreadFirstActivities: CFRunLoopActivity = firstActivities.union(.beforeSources)
    static let lastActivities: CFRunLoopActivity = [.beforeWaiting]

    /// Whether every run of the main loop goes through the agent's `CFRunLoopRunSpecific` (the agent is preloaded, as
    /// under `stallwatch run`): then `entry` and `exit` come from there (`sw_main_loop_publisher.h`), which costs a
    /// Foundation loop (`RunLoop.run(until:)`, one run per handled source or block) two of CoreFoundation's observer
    /// dispatches less an iteration, and the main loop's observers take only waking and going to sleep.
    static let mainRunsPassThroughAgent = sw_agent_runs_pass_through_agent() != 0

    /// The main loop's first observer's activities.
    static var mainFirstActivities: CFRunLoopActivity {
        mainRunsPassThroughAgent ? [.beforeWaiting, .afterWaiting] : firstActivities
    }

    /// Creates both observers, not yet added to any run loop (see ``MainLoopObservation``). Their call-outs are the
    /// agent's C (`sw_main_loop_first_observer`, `sw_main_loop_last_observer`), which moves the nesting model and
    /// publishes to ``ActivityBoard/shared`` with no Swift on the way: every wake and every sleep runs them.
    static func make() -> [CFRunLoopObserver] {
        typealias Callout = @convention(c) (UnsafeMutableRawPointer?, UInt, UnsafeMutableRawPointer?) -> Void
        let first = unsafeBitCast(sw_main_loop_first_observer as Callout, to: CFRunLoopObserverCallBack.self)
        let last = unsafeBitCast(sw_main_loop_last_observer as Callout, to: CFRunLoopObserverCallBack.self)
        return [
            CFRunLoopObserverCreate(nil, mainFirstActivities.rawValue, true, CFIndex.min, first, nil),
            CFRunLoopObserverCreate(nil, lastActivities.rawValue, true, CFIndex.max, last, nil),
        ].compactMap { $0 }
    }

    /// Starts the agent's C publishing the main loop's activity to ``ActivityBoard/shared``, naming modes through
    /// ``RunLoopModes`` when a mode is not the one seen last.
    static func startPublishing() {
        sw_main_loop_publisher_start(
            { name in
                guard let name else { return 0 }
                return RunLoopModes.index(named: Unmanaged<CFString>.fromOpaque(name).takeUnretainedValue())
            },
            { identity in
                let (index, name) = RunLoopModes.current()
                identity?.pointee = name
                return index
            },
            Unmanaged.passUnretained(kCFRunLoopDefaultMode).toOpaque(), mainRunsPassThroughAgent ? 1 : 0)
    }
}

/// Adds the observers (and `--fps`'s frame tick) to the main run loop once the program has made that loop, and to
/// its run-loop modes as they appear.
///
/// Not before the program made the loop: making it makes CoreFoundation open its wake-up and timer descriptors, and
/// a daemon that closes every inherited descriptor at start (or `dup2`s over them) would close them under the loop,
/// whose timers then never fire. The preloaded agent hears the moment the program first asks for its main loop
/// (`sw_agent_on_main_run_loop`), and attaches there, before the loop can run; without that hook (the agent linked
/// after Foundation), the watcher finds the loop on a later wake, looked up without being created. Where neither can
/// be asked, the observers are added at once, as before.
///
/// A private mode (`RunLoop.current.run(mode: .init("modal"), before:)`) is not in the common set, so
/// observers added to the common modes never hear from it: while the main thread runs a nested loop in it,
/// the last published state is the callout that started the loop, and a responsive modal session would look
/// like a stall. The watcher calls ``refresh()`` on every wake; the loop found there for the first time, or a mode
/// seen for the first time, gets both observers, then the main run loop is woken (harmless: a wake-up with nothing
/// to do just loops) so that a loop already running or asleep there publishes its state at once.
final class MainLoopObservation: @unchecked Sendable {
    private let observers: [CFRunLoopObserver]
    private let frameTickInterval: UInt64?
    private var known: Set<String> = []
    private let lock = NSLock()
    /// The main loop, once attached to.
    private var loop: CFRunLoop?
    private var detached = false
    /// `--fps`'s tick, once added.
    private var frameTick: CFRunLoopTimer?
    /// Every mode the main loop had at the last refresh, for the progress probe (a block runs only in the modes it was
    /// posted for; naming a mode the loop lacks would create it).
    private var probeModes: CFArray?

    /// The observation the main-loop hook attaches; one at a time (the agent runs one monitor).
    nonisolated(unsafe) private static var awaitingLoop: MainLoopObservation?

    /// Attaches now if the main loop exists (taking its modes as observed, so that only modes appearing later
    /// need a wake-up), else when the program makes it, or on the first ``refresh()`` that finds it.
    init(frameTickInterval: UInt64? = nil) {
        observers = RunLoopObservers.make()
        self.frameTickInterval = frameTickInterval
        if !observers.isEmpty { RunLoopObservers.startPublishing() }
        let attachedNow = lock.withLock { attachIfLoopExists() }
        guard !attachedNow, !observers.isEmpty else { return }
        Self.awaitingLoop = self
        sw_agent_on_main_run_loop { pointer in
            guard let pointer, let observation = MainLoopObservation.awaitingLoop else { return }
            let loop = Unmanaged<CFRunLoop>.fromOpaque(pointer).takeUnretainedValue()
            observation.lock.withLock { observation.attach(to: loop) }
        }
        // The program may have made its loop between the lookup and the hook.
        lock.withLock { _ = attachIfLoopExists() }
    }

    /// Attaches if not yet done, then observes modes not seen before. Returns true if it added observers
    /// anywhere: the published state may be stale until the main thread has gone through its next transition.
    func refresh() -> Bool {
        lock.withLock {
            // Nothing to observe, or a main thread gone for good: touching its loop would only make CoreFoundation
            // print into the workload's stderr.
            guard !detached, !observers.isEmpty, sw_agent_main_thread_exited() == 0 else { return false }
            let attachedNow = attachIfLoopExists()
            guard let loop else { return false }
            let added = addObserversToNewModes() || attachedNow
            if added {
                // A loop may already be running in the new mode, entered before it had observers.
                sw_main_loop_modes_changed()
                CFRunLoopWakeUp(loop)
            }
            return added
        }
    }

    /// Asks the main loop for a sign of progress: a block that publishes `beforeSources` when it runs, which is the
    /// next time the loop is between two callouts (CoreFoundation runs blocks before its version-0 sources, after
    /// them, and after a timer, port or main-queue callout). Watcher thread; posts nothing before the observers are
    /// attached or after ``detach()``.
    ///
    /// A block rather than an observer: it costs the loop only while one is queued (an empty block list is one test
    /// per pass), where an observer of `beforeSources` costs every iteration for good.
    func postProgressProbe() {
        lock.withLock {
            guard !detached, let loop, let probeModes, sw_agent_main_thread_exited() == 0 else { return }
            // Precise clock: the probe runs a few hundred times a second at most, and its time may become a stall's
            // start.
            CFRunLoopPerformBlock(loop, probeModes) { sw_main_loop_progress() }
        }
    }

    /// Removes the observers and the frame tick: the main thread no longer publishes. Final.
    func detach() {
        lock.withLock {
            detached = true
            if Self.awaitingLoop === self {
                sw_agent_on_main_run_loop(nil)
                Self.awaitingLoop = nil
            }
            for observer in observers { CFRunLoopObserverInvalidate(observer) }
            sw_main_loop_publisher_stop_runs()
            if let frameTick { FrameTickTimer.remove(frameTick) }
        }
    }

    /// Attaches to the main loop if the program has made it (or if that cannot be known). Lock held.
    private func attachIfLoopExists() -> Bool {
        guard loop == nil, !detached, !observers.isEmpty, sw_agent_main_thread_exited() == 0 else { return false }
        var answerable: Int32 = 0
        let existing = sw_agent_existing_main_run_loop(&answerable)
        if let existing {
            attach(to: Unmanaged<CFRunLoop>.fromOpaque(existing).takeUnretainedValue())
        } else if answerable == 0 {
            attach(to: CFRunLoopGetMain())
        }
        return loop != nil
    }

    /// Adds the observers to the common modes and the frame tick. Lock held.
    private func attach(to mainLoop: CFRunLoop) {
        guard loop == nil, !detached else { return }
        for observer in observers { CFRunLoopAddObserver(mainLoop, observer, kCFRunLoopCommonModes) }
        if let frameTickInterval { frameTick = FrameTickTimer.install(on: mainLoop, interval: frameTickInterval) }
        loop = mainLoop
        if Self.awaitingLoop === self { Self.awaitingLoop = nil }
        // The modes the loop has now are observed through the common modes or get the observers here.
        _ = addObserversToNewModes()
    }

    private func addObserversToNewModes() -> Bool {
        guard let mainLoop = loop, let modes = CFRunLoopCopyAllModes(mainLoop) else { return false }
        probeModes = modes
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
