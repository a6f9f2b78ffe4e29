// System calls that fail with errno, wrapped once: each failure becomes a typed error naming the call.
import Glibc

/// A system call that failed: which one, and its `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call's name as the manual names it (`socketpair`, `posix_spawn`, ...).
    public let call: String
    public let errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's sentence for `errno` ("No such file or directory").
    public var reason: String { Self.describe(errno) }

    public var description: String { "\(call): \(reason)" }

    /// The C library's sentence for an `errno` value.
    public static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// Calls a system call again while it is interrupted by a signal, and turns its failure into a ``SystemError``.
public enum Syscall {
    /// The result of `body`, which returns -1 (with `errno` set) on failure; retried on `EINTR`.
    @discardableResult
    public static func call<Result: BinaryInteger>(_ name: String, _ body: () -> Result) throws(SystemError)
        -> Result
    {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = Glibc.errno
            if code != EINTR { throw SystemError(name, errno: code) }
        }
    }

    /// For calls that return an error number instead of setting `errno` (`posix_spawn`, `pthread_*`).
    public static func checking(_ name: String, _ body: () -> Int32) throws(SystemError) {
        let code = body()
        if code != 0 { throw SystemError(name, errno: code) }
    }
}
