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
