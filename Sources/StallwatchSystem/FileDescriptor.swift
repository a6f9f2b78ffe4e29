// Whole writes and reads on raw descriptors, which the collector and its reports use instead of buffered streams.
import Glibc

/// Operations on a raw file descriptor that loop until done.
public enum FileDescriptor {
    /// Writes all of `bytes`, resuming after partial writes and signals.
    public static func writeAll(_ bytes: some Collection<UInt8>, to descriptor: Int32) throws(SystemError) {
        var pending = Array(bytes)
        var offset = 0
        while offset < pending.count {
            let written = try Syscall.call("write") {
                pending.withUnsafeMutableBytes { buffer in
                    write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                }
            }
            offset += written
        }
        pending.removeAll()
    }

    /// Writes all of `bytes` to a non-blocking descriptor, waiting for it to take more at most `milliseconds` at a
    /// time: a reader that stops reading makes this fail (`EAGAIN`) instead of hanging.
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32, waitingUpTo milliseconds: Int32)
        throws(SystemError)
    {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written >= 0 {
                offset += written
                continue
            }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN else { throw SystemError("write", errno: code) }
            if try wait(for: Int16(POLLOUT), on: descriptor, milliseconds: milliseconds) == 0 {
                throw SystemError("write", errno: EAGAIN)
            }
        }
    }

    /// Writes all of `text`; false on an error such as a closed pipe (for output that has nowhere to report to).
    @discardableResult
    public static func writeAll(_ text: String, to descriptor: Int32) -> Bool {
        do {
            try writeAll(text.utf8, to: descriptor)
            return true
        } catch {
            return false
        }
    }

    /// Waits for `events` on one descriptor up to `milliseconds` (-1: for ever); the events that happened, 0 when
    /// the time ran out. A signal does not end the wait early.
    public static func wait(for events: Int16, on descriptor: Int32, milliseconds: Int32) throws(SystemError)
        -> Int16
    {
        var request = pollfd(fd: descriptor, events: events, revents: 0)
        let ready = try Syscall.call("poll") { poll(&request, 1, milliseconds) }
        return ready > 0 ? request.revents : 0
    }
}
