// Starts a program with its stdout and stderr collected, and reaps it only when asked.
//
// Not Foundation's `Process`: it reaps children from a background thread, and while the capture benchmark
// ptraces a child such a reaper could take the stop notification the sampler waits for (see
// `RemoteStackSampler`). Here a child is reaped on the driver's thread, after any capture of it.
import Foundation
import StallwatchSystem
import Synchronization

final class ChildProcess {
    let pid: pid_t
    let arguments: [String]
    private let output: StreamCollector
    private let errorOutput: StreamCollector

    /// Starts `arguments[0]` (a path) with the driver's environment plus `extra`, stdin from /dev/null.
    init(_ arguments: [String], environment extra: [String: String] = [:]) throws(BenchError) {
        self.arguments = arguments
        let outputPipe = try Self.makePipe()
        let errorPipe = try Self.makePipe()
        let environment = ProcessInfo.processInfo.environment.merging(extra) { _, added in added }
        var spawn = Spawn(
            executable: arguments[0], arguments: arguments, environment: Spawn.environmentStrings(environment))
        // dup2 clears close-on-exec on the copy only: the child inherits these two ends and nothing else.
        spawn.fileActions = [
            .open("/dev/null", flags: O_RDONLY, to: STDIN_FILENO), .duplicate(outputPipe.write, to: STDOUT_FILENO),
            .duplicate(errorPipe.write, to: STDERR_FILENO),
        ]
        let started = Result { () throws(SystemError) in try spawn.start() }
        close(outputPipe.write)
        close(errorPipe.write)
        switch started {
        case .failure(let error):
            close(outputPipe.read)
            close(errorPipe.read)
            throw BenchError("cannot start \(arguments[0]): \(error.reason)")
        case .success(let pid):
            self.pid = pid
        }
        output = StreamCollector(reading: outputPipe.read)
        errorOutput = StreamCollector(reading: errorPipe.read)
    }

    /// Everything the child (and any process that inherited its stdout) has written so far.
    var standardOutput: String { output.text }
    var standardError: String { errorOutput.text }

    /// Waits until a line of stdout or stderr satisfies `predicate`, and returns it.
    func waitForLine(
        fromStandardError: Bool, timeout: Double, where predicate: (Substring) -> Bool
    ) throws(BenchError) -> Substring {
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        let stream = fromStandardError ? errorOutput : output
        while MonotonicClock.now() < deadline {
            if let line = stream.text.split(separator: "\n").first(where: predicate) { return line }
            MonotonicClock.sleep(seconds: 0.002)
        }
        throw BenchError("\(arguments[0]) printed no expected line within \(timeout) s; stderr: \(standardError)")
    }

    func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Reaps the child and waits for its output to end; kills it if it outlives `timeout`.
    ///
    /// - Returns: Its exit status, or 128 + the signal that killed it.
    @discardableResult
    func wait(timeout: Double) throws(BenchError) -> Int32 {
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if MonotonicClock.now() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw BenchError("\(arguments.joined(separator: " ")) did not finish within \(timeout) s")
            }
            MonotonicClock.sleep(seconds: 0.002)
        }
        output.waitForEnd(timeout: 5)
        errorOutput.waitForEnd(timeout: 5)
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Waits for the child to exit and notes when, for timing it: a blocking `waitid`, not the 2 ms polls of
    /// ``wait(timeout:)``. A watchdog kills the child if it outlives `timeout`.
    ///
    /// - Returns: Its exit status (128 + the signal that killed it) and the `CLOCK_MONOTONIC` instant it exited.
    func waitForExit(timeout: Double) throws(BenchError) -> (status: Int32, exitedAt: UInt64) {
        let watchdog = Watchdog(pid: pid)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { watchdog.fire() }
        // WNOWAIT leaves the child a zombie, so its pid cannot be reused before the watchdog is disarmed.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else { throw BenchError("waitid: \(String(cString: strerror(errno)))") }
        }
        let exitedAt = MonotonicClock.now()
        let killed = watchdog.disarm()
        let status = try wait(timeout: 5)
        if killed { throw BenchError("\(arguments.joined(separator: " ")) did not finish within \(timeout) s") }
        return (status, exitedAt)
    }

    /// A pipe whose ends close on exec (the driver spawns from one thread, so setting the flag after `pipe`
    /// cannot race with another spawn; Swift's Glibc module lacks `pipe2`).
    private static func makePipe() throws(BenchError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return (descriptors[0], descriptors[1])
    }
}

/// Reads one pipe to its end on its own thread, so a chatty child never blocks on a full pipe.
private final class StreamCollector: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    private let ended = DispatchSemaphore(value: 0)

    init(reading descriptor: Int32) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                bytes.withLock { $0.append(contentsOf: buffer[..<count]) }
            }
            close(descriptor)
            ended.signal()
        }
        thread.start()
    }

    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits for end of file: every process holding the pipe's write end has closed it.
    func waitForEnd(timeout: Double) {
        if ended.wait(timeout: .now() + timeout) == .success { ended.signal() }
    }
}

/// Kills a child that outlives its time, unless disarmed first.
private final class Watchdog: Sendable {
    private let pid: pid_t
    private let state = Mutex<(armed: Bool, fired: Bool)>((armed: true, fired: false))

    init(pid: pid_t) { self.pid = pid }

    func fire() {
        state.withLock { state in
            guard state.armed else { return }
            kill(pid, SIGKILL)
            state.fired = true
        }
    }

    /// Stops the watchdog; returns whether it had already killed the child.
    func disarm() -> Bool {
        state.withLock { state in
            state.armed = false
            return state.fired
        }
    }
}

extension ChildProcess {
    /// User plus system CPU seconds of this process's reaped children: what a child cost, read around its reaping.
    static func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
