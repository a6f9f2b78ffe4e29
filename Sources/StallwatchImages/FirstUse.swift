// A value made at most once, by whichever caller first needs it.
import Synchronization

/// Holds a value that costs something to make and may never be needed: made on first use, under a lock, so any
/// thread may ask.
final class FirstUse<Value>: @unchecked Sendable {
    private let made: Mutex<Value?>
    private let make: () -> Value

    init(_ make: @escaping () -> Value) {
        made = Mutex(nil)
        self.make = make
    }

    /// One already made.
    convenience init(ready value: Value) {
        self.init { value }
        _ = self.value
    }

    /// Whether the value was made (asked for, or made ready).
    var isMade: Bool { made.withLock { $0 != nil } }

    var value: Value {
        made.withLock { made in
            if let made { return made }
            let fresh = make()
            made = fresh
            return fresh
        }
    }
}
