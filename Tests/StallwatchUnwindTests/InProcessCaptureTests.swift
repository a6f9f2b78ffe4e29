// In-process capture (CStallwatchAgentSupport): a signal to a thread of this test process, whose
// handler unwinds itself with the dlopen'ed libunwind.
import CStallwatchAgentSupport
import Foundation
import Glibc
import Testing

/// A pthread of this process blocked in `read()` on a pipe inside `blockingBody` until `finish()`.
private final class BlockedThread {
    let tid: Int32
    private let pipe: (read: Int32, write: Int32)
    private var thread = pthread_t()

    /// The C function the thread runs: its frame must show up in the captured stack.
    static let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { argument in
        let words = argument!.assumingMemoryBound(to: Int32.self)
        unblockCaptureSignal()
        words[1] = Int32(sw_agent_gettid())
        var byte: UInt8 = 0
        // Blocks here; `read` is restarted after our SA_RESTART handler, so the thread notices nothing.
        _ = read(words[0], &byte, 1)
        return nil
    }

    private let words = UnsafeMutablePointer<Int32>.allocate(capacity: 2)

    init() {
        var fds: [Int32] = [0, 0]
        _ = Glibc.pipe(&fds)
        pipe = (fds[0], fds[1])
        words[0] = pipe.read
        words[1] = 0
        pthread_create(&thread, nil, Self.body, words)
        while UnsafeMutablePointer(mutating: words)[1] == 0 { usleep(1000) }
        tid = words[1]
        // Let it reach read().
        for _ in 0..<200 where procState(pid: getpid(), tid: tid) != "S" { usleep(1000) }
    }

    func finish() {
        var byte: UInt8 = 1
        _ = write(pipe.write, &byte, 1)
        pthread_join(thread, nil)
        close(pipe.read)
        close(pipe.write)
        words.deallocate()
    }

    static var bodyAddress: UInt64 { UInt64(UInt(bitPattern: unsafeBitCast(body, to: UnsafeRawPointer.self))) }
}

/// Threads inherit their creator's signal mask, and Swift Testing runs tests on libdispatch worker
/// threads, which block all signals: a thread meant to be captured must unblock the capture signal.
private func unblockCaptureSignal() {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, sw_agent_default_capture_signal())
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
}

/// The file mapped at `address` in this process (from /proc/self/maps; dladdr needs _GNU_SOURCE).
private func imageName(_ address: UInt64) -> String? {
    guard let text = readProcFile("/proc/self/maps") else { return nil }
    return text.split(separator: "\n").compactMap(Mapping.init).name(of: address)
}

@Suite("In-process capture", .serialized)
struct InProcessCaptureTests {
    init() throws {
        let status = sw_agent_capture_prepare(sw_agent_default_capture_signal())
        try #require(status == 0, "prepare: \(String(cString: sw_agent_capture_error()))")
    }

    @Test("a blocked thread's stack runs from libc's read through its function to thread start")
    func blockedThread() throws {
        let blocked = BlockedThread()
        defer { blocked.finish() }
        var addresses = [UInt64](repeating: 0, count: 128)
        var stopped: UInt64 = 0
        let count = sw_agent_capture_thread(blocked.tid, &addresses, 128, 1000, &stopped)
        try #require(count > 0, "capture: \(count) \(String(cString: sw_agent_capture_error()))")
        let frames = addresses.prefix(Int(count))

        #expect(count > 3)
        #expect(stopped > 0)
        #expect(imageName(frames.first!)?.contains("libc.so") == true, "innermost frame is read() in libc")
        let start = BlockedThread.bodyAddress
        #expect(frames.contains { $0 > start && $0 - start < 512 }, "the thread's own function")
        #expect(imageName(frames.last!)?.contains("libc.so") == true, "outermost frame is clone3 in libc")
    }

    @Test("captures are fast once warm")
    func latency() throws {
        let blocked = BlockedThread()
        defer { blocked.finish() }
        var addresses = [UInt64](repeating: 0, count: 128)
        var latencies: [UInt64] = []
        var handlerTimes: [UInt64] = []
        for _ in 0..<21 {
            var stopped: UInt64 = 0
            let before = sw_agent_now_ns()
            let count = sw_agent_capture_thread(blocked.tid, &addresses, 128, 1000, &stopped)
            latencies.append(sw_agent_now_ns() - before)
            handlerTimes.append(stopped)
            try #require(count > 3)
        }
        let warm = latencies.dropFirst().sorted()
        let handler = handlerTimes.dropFirst().sorted()
        print(
            "in-process capture: first \(latencies[0] / 1000) us (handler \(handlerTimes[0] / 1000) us);"
                + " warm median \(warm[warm.count / 2] / 1000) us (handler \(handler[handler.count / 2] / 1000) us)")
        #expect(warm[warm.count / 2] < 5_000_000)
    }

    @Test("a thread sleeping in usleep is captured (and its sleep is cut short: the known EINTR flaw)")
    func sleepingThread() throws {
        final class Box: @unchecked Sendable {
            var tid: Int32 = 0
            var slept: UInt64 = 0
        }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            unblockCaptureSignal()
            box.tid = sw_agent_gettid()
            let start = sw_agent_now_ns()
            usleep(300_000)
            box.slept = sw_agent_now_ns() - start
            done.signal()
        }
        thread.start()
        while box.tid == 0 { usleep(1000) }
        usleep(50_000)
        var addresses = [UInt64](repeating: 0, count: 128)
        let count = sw_agent_capture_thread(box.tid, &addresses, 128, 1000, nil)
        done.wait()
        try #require(count > 3)
        #expect(imageName(addresses[0])?.contains("libc.so") == true, "innermost frame is clock_nanosleep")
        // Not asserted: whether usleep returned early. It does (EINTR), which is why ptrace is preferred.
        print("usleep(300 ms) with one in-process capture after 50 ms slept \(box.slept / 1_000_000) ms")
    }

    @Test("a thread that blocks the signal times out, and its late answer does not corrupt the next capture")
    func lateHandler() throws {
        final class Box: @unchecked Sendable {
            var tid: Int32 = 0
            var release = false
        }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, sw_agent_default_capture_signal())
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            box.tid = sw_agent_gettid()
            while !box.release { usleep(1000) }
            // The pending signal is delivered now, long after its request timed out.
            pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
            done.signal()
        }
        thread.start()
        while box.tid == 0 { usleep(1000) }

        var addresses = [UInt64](repeating: 0, count: 128)
        #expect(sw_agent_capture_thread(box.tid, &addresses, 128, 100, nil) == -ETIMEDOUT)
        #expect(String(cString: sw_agent_capture_error()).contains("did not answer"))

        let blocked = BlockedThread()
        defer { blocked.finish() }
        box.release = true
        done.wait()
        for _ in 0..<3 {
            let count = sw_agent_capture_thread(blocked.tid, &addresses, 128, 1000, nil)
            try #require(count > 3)
            let start = BlockedThread.bodyAddress
            #expect(addresses.prefix(Int(count)).contains { $0 > start && $0 - start < 512 })
        }
    }

    @Test("errors: no such thread, and capturing oneself")
    func errors() {
        var addresses = [UInt64](repeating: 0, count: 8)
        #expect(sw_agent_capture_thread(999_999_999, &addresses, 8, 100, nil) == -ESRCH)
        #expect(sw_agent_capture_thread(sw_agent_gettid(), &addresses, 8, 100, nil) == -EDEADLK)
        #expect(sw_agent_capture_prepare(sw_agent_default_capture_signal() + 1) == -EBUSY)
    }
}
