// The ways work reaches the main run loop: timers, a version-0 source, and a beforeWaiting observer.
//
// CoreFoundation appears only here; the demo is a stand-in for a user program, which may use CF directly.
import CoreFoundation
import Foundation

enum MainRunLoop {
    /// Adds a timer to the main run loop in the common modes, first firing at `instant`.
    ///
    /// The fire date is explicit because on Linux `Timer(timeInterval:repeats:block:)` fires at once.
    static func addTimer(
        firingAt instant: MonotonicInstant,
        repeatingEvery interval: Duration? = nil,
        _ body: @escaping @Sendable () -> Void
    ) {
        let timer = Timer(fire: instant.date, interval: interval?.seconds ?? 0, repeats: interval != nil) { _ in
            body()
        }
        RunLoop.main.add(timer, forMode: .common)
    }

    /// Adds an observer that calls `body` each time the main run loop is about to sleep, in the common modes.
    static func addBeforeWaitingObserver(_ body: @escaping @Sendable () -> Void) {
        let observer = CFRunLoopObserverCreateWithHandler(
            kCFAllocatorDefault, CFRunLoopActivity.beforeWaiting.rawValue, true, 0
        ) { _, _ in body() }
        CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes)
    }
}

/// A version-0 source on the main run loop: any thread signals it, the main thread performs it.
final class MainRunLoopSource: @unchecked Sendable {
    // @unchecked: CFRunLoopSourceSignal and CFRunLoopWakeUp are thread-safe, and nothing else touches the source.
    private let source: CFRunLoopSource

    /// Creates the source and adds it to the main run loop in the common modes; it lives as long as the process.
    init(perform: @escaping @Sendable () -> Void) {
        var context = CFRunLoopSourceContext()
        // Retained once and never released: the source, and so its callback, lives as long as the process.
        context.info = Unmanaged.passRetained(Callback(perform)).toOpaque()
        context.perform = { info in Unmanaged<Callback>.fromOpaque(info!).takeUnretainedValue().body() }
        source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        CFRunLoopAddSource(CFRunLoopGetMain(), source, kCFRunLoopCommonModes)
    }

    /// Marks the source ready and wakes the main run loop so it performs the source now, not at its next wake-up.
    func signal() {
        CFRunLoopSourceSignal(source)
        CFRunLoopWakeUp(CFRunLoopGetMain())
    }

    /// The perform callback as an object, because CF hands a C callback only an opaque pointer.
    private final class Callback {
        let body: @Sendable () -> Void

        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
