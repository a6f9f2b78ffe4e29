// The run-loop modes the main thread has run in, by small index, so one bit field of the board can name them.
import CoreFoundation
import StallwatchCore
import Synchronization

/// Names the main loop's modes with indices 1 to 15, for ``PackedActivity``; 0 is none or unknown.
///
/// The main thread looks a mode up only when a loop is entered (or when the nesting must be repaired), by the
/// identity of the name CoreFoundation returns, which is the mode's own name object and so stable: no string is
/// read after the first time. The watcher turns an index back into the name when a stall begins.
enum RunLoopModes {
    private static let names = Mutex<[String]>([])
    /// Main thread only: the name objects already given an index, with it.
    nonisolated(unsafe) private static var known: [(name: UnsafeMutableRawPointer, index: UInt8)] = []
    /// The index of the main loop's current mode, and the identity of its name object (which is kept alive for good
    /// once seen, so its address never names another mode). Main thread only.
    static func current() -> (index: UInt8, name: UnsafeMutableRawPointer?) {
        guard let mode = CFRunLoopCopyCurrentMode(CFRunLoopGetCurrent()) else { return (0, nil) }
        let identity = Unmanaged.passUnretained(mode).toOpaque()
        if let entry = known.first(where: { $0.name == identity }) { return (entry.index, identity) }
        let index = index(named: mode)
        // Keep the name object alive, so its address is never reused for another mode's name.
        _ = Unmanaged.passRetained(mode)
        known.append((identity, index))
        return (index, identity)
    }

    /// The index of the mode named `mode` (any string object with its name), by its text. Main thread only.
    static func index(named mode: CFString) -> UInt8 {
        let text = MainLoopObservation.name(of: mode)
        // Not a mode: CoreFoundation refuses to run it.
        guard text != "kCFRunLoopCommonModes" else { return 0 }
        return names.withLock { names -> UInt8 in
            if let found = names.firstIndex(of: text) { return UInt8(found + 1) }
            guard names.count < Int(PackedActivity.modeLimit) else { return 0 }
            names.append(text)
            return UInt8(names.count)
        }
    }

    /// The name of the mode with `index`; nil for 0 or an unknown index. Any thread.
    static func name(_ index: UInt8?) -> String? {
        guard let index, index > 0 else { return nil }
        return names.withLock { names in Int(index) <= names.count ? names[Int(index) - 1] : nil }
    }
}
