// Runs a helper program to completion with posix_spawn: input from memory, output collected, exit reaped at once.
import CStallwatchSystem
import Glibc
import StallwatchCore
import StallwatchSystem

/// A short-lived helper process (`llvm-symbolizer`).
///
/// Not Foundation's `Process`: its `waitUntilExit()` polls a run loop every 50 ms, which would triple a one-shot
/// `stallwatch stack`. Here the input sits in an in-memory file (no pipe to fill, no writer thread, no SIGPIPE), the
/// output is read to end of file, and the child is reaped by its own pid only, never anyone else's. A helper that
/// outlives its deadline (a hung read on a network file system, a huge binary) is killed: the collector calling this
/// has its own signals blocked for its signalfd and must never wait on a helper for ever.
public enum HelperProcess {
    /// What the helper wrote on standard output, if it ran, finished within `deadline` and exited with status 0.
    public static func run(
        _ executable: String, arguments: [String], environment: [String], input: String,
        deadline: Duration = .seconds(10)
    ) -> String? {
        let bytes = Array(input.utf8)
        let stdinFile = bytes.withUnsafeBytes { sw_memory_file($0.baseAddress, UInt($0.count)) }
        guard stdinFile >= 0 else { return nil }
        defer { close(stdinFile) }
        var output: [Int32] = [-1, -1]
        guard sw_pipe_cloexec(&output) == 0 else { return nil }

        // The collector blocks signals for its signalfd; the helper starts with default actions.
        var spawn = Spawn(executable: executable, arguments: [executable] + arguments, environment: environment)
        spawn.fileActions = [
            .duplicate(stdinFile, to: STDIN_FILENO), .duplicate(output[1], to: STDOUT_FILENO),
            .open("/dev/null", flags: O_WRONLY, to: STDERR_FILENO),
        ]
        spawn.signalsAtDefault = [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT]
        let started = try? spawn.start()
        close(output[1])
        defer { close(output[0]) }
        guard let pid = started else { return nil }

        let collected = readToEnd(output[0], until: monotonicNow() + deadline.nanoseconds)
        if collected == nil { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // Exited normally (no signal) with status 0.
        guard let collected, status & 0x7f == 0, (status >> 8) & 0xff == 0 else { return nil }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Everything readable from `descriptor` until end of file, or nil if `deadline` (monotonic) passes first.
    private static func readToEnd(_ descriptor: Int32, until deadline: UInt64) -> [UInt8]? {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let now = monotonicNow()
            guard now < deadline else { return nil }
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }  // Timed out: the deadline check above ends it.
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                collected.append(contentsOf: buffer[..<count])
            } else if count < 0 && (errno == EINTR || errno == EAGAIN) {
                continue
            } else {
                return collected  // End of file (or a read error: what came so far is checked by the caller).
            }
        }
    }
}
