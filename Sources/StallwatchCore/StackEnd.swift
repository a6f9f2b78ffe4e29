// Whether a captured stack reached the thread's start, and if not, where it stopped and why.

/// Tells a whole stack (down to `_start`, or to `clone` for other threads) from one the unwinder cut short.
public enum StackEnd {
    /// Where every thread's stack begins: the program's entry point, or the thread start of `clone`.
    static let roots: Set<String> = ["_start", "__clone3", "clone3", "__clone", "clone", "start_thread"]

    /// libunwind's `UNW_E*` codes, for people.
    static let unwindErrors: [Int32: String] = [
        -1: "unspecified error", -2: "out of memory", -3: "bad register number", -4: "read-only register",
        -5: "stop unwinding", -6: "invalid instruction pointer", -7: "bad frame", -8: "unsupported operation",
        -9: "unwind information of an unknown version", -10: "no unwind information",
    ]

    /// Why the stack ends before the thread's start, or nil when it is whole (or empty: no capture to judge).
    ///
    /// - Parameters:
    ///   - frames: the named stack, innermost first.
    ///   - unwindError: libunwind's code if the walk ended on an error (a negative `UNW_E*`), else 0.
    ///   - walkLimit: the bound (in frames) at which the capture's walk stopped before the end; nil when it did not.
    public static func cutShortNote(frames: [Frame], unwindError: Int32, walkLimit: Int? = nil) -> String? {
        let physical = frames.filter { !$0.inlined }
        guard let last = physical.last ?? frames.last else { return nil }
        if let symbol = last.symbol, roots.contains(symbol) { return nil }
        // A stripped executable's `_start` has no name, but only `_start` calls libc's start.
        if unwindError == 0, walkLimit == nil, physical.count >= 2,
            physical[physical.count - 2].symbol?.hasPrefix("__libc_start_main") == true
        {
            return nil
        }
        let name = last.symbol ?? "0x" + String(last.address, radix: 16)
        let place = last.imageName.map { " in \($0) +0x\(String(last.offset ?? 0, radix: 16))" } ?? ""
        let why: String
        if let walkLimit {
            why = "it is deeper than the \(walkLimit) frames a capture walks"
        } else if unwindError != 0 {
            why = "libunwind stopped with \(unwindErrors[unwindError] ?? "error") (\(unwindError))"
        } else if last.image == nil {
            why = "the return address lies in no mapped image (a corrupt stack, or JIT code)"
        } else {
            why =
                "no unwind rule covers it (neither .eh_frame nor .debug_frame: built without unwind tables, or stripped)"
        }
        return "stack cut short after \(name)\(place), before _start or clone: \(why)"
    }
}
