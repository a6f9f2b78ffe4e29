// Child processes to capture in tests: spawning, /proc inspection, and a tiny C workload built with cc.
import Foundation
import Glibc
import StallwatchCore

/// A child process of the test runner. Killed and reaped on `stop()` unless already reaped.
public final class TargetProcess {
    public let pid: Int32
    private var reaped = false

    /// Spawns `arguments` (an absolute path first); its stdout goes to `stdoutPath` if given.
    public init(_ arguments: [String], stdoutPath: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdoutPath {
            posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, arguments[0], &actions, nil, argv, environ)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        pid = child
    }

    /// The scheduler state letter from /proc/PID/stat ("R", "S", "t", "Z", ...), nil once reaped.
    public var state: Character? { procState(pid: pid, tid: pid) }

    /// Waits (without reaping) until the process runs `executable`, i.e. its exec has happened.
    public func awaitExec(of executable: String, timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
                target == executable
            {
                return true
            }
            usleep(2000)
        }
        return false
    }

    /// Blocks until the process exits and returns its raw wait status.
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
        return status
    }

    /// Kills and reaps the process.
    public func stop() {
        guard !reaped else { return }
        kill(pid, SIGKILL)
        _ = wait()
    }

    deinit { stop() }

    /// The mappings of the process, from /proc/PID/maps.
    public func mappings() -> [Mapping] {
        guard let text = FileBytes.text("/proc/\(pid)/maps") else { return [] }
        return text.split(separator: "\n").compactMap(Mapping.init)
    }
}

/// One line of /proc/PID/maps.
public struct Mapping {
    public let range: Range<UInt64>
    public let path: String

    public init?(_ line: Substring) {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        let bounds = fields[0].split(separator: "-")
        guard bounds.count == 2, let low = UInt64(bounds[0], radix: 16), let high = UInt64(bounds[1], radix: 16)
        else { return nil }
        range = low..<high
        path = fields.count > 5 ? fields[5].trimmingCharacters(in: .whitespaces) : ""
    }
}

extension [Mapping] {
    /// The path (or [vdso] etc.) of the mapping holding `address`, if any.
    public func name(of address: UInt64) -> String? { first { $0.range.contains(address) }?.path }
}

/// The state letter of a thread, or nil if it no longer exists.
public func procState(pid: Int32, tid: Int32) -> Character? {
    guard let text = FileBytes.text("/proc/\(pid)/task/\(tid)/stat"),
        let close = text.lastIndex(of: ")")
    else { return nil }
    return text[text.index(after: close)...].first { $0 != " " }
}

/// A small C program with known function names, compiled once per test run.
///
/// `spin` loops on clock_gettime() (so it is usually inside the vDSO) in `sw_helper_spin_inner`,
/// called from `sw_helper_spin_outer`, called from `main`; it prints the addresses of those
/// functions first. `sleep` makes one nanosleep(1 s) call and exits 3 if it was interrupted
/// (coreutils' sleep would retry). `traced` forks a child that PTRACE_SEIZEs the parent, then sleeps.
public enum CHelper {
    public static let source = #"""
        #include <signal.h>
        #include <stdio.h>
        #include <string.h>
        #include <sys/ptrace.h>
        #include <time.h>
        #include <unistd.h>

        __attribute__((noinline)) void sw_helper_spin_inner(void) {
            struct timespec ts;
            volatile long sink = 0;
            for (;;) { clock_gettime(CLOCK_MONOTONIC, &ts); sink += ts.tv_nsec; }
        }
        __attribute__((noinline)) void sw_helper_spin_outer(void) { sw_helper_spin_inner(); __asm__ volatile(""); }

        int main(int argc, char **argv) {
            if (argc > 1 && strcmp(argv[1], "sleep") == 0) {
                // One nanosleep, not retried: exit 3 if anything interrupted it.
                struct timespec second = {1, 0};
                return nanosleep(&second, NULL) == 0 ? 0 : 3;
            }
            if (argc > 1 && strcmp(argv[1], "traced") == 0) {
                pid_t parent = getpid();
                if (fork() == 0) {
                    if (ptrace(PTRACE_SEIZE, parent, 0, 0) != 0) _exit(1);
                    pause();
                }
                for (;;) pause();
            }
            printf("%lx %lx %lx\n", (unsigned long)&sw_helper_spin_inner, (unsigned long)&sw_helper_spin_outer,
                   (unsigned long)&main);
            fflush(stdout);
            sw_helper_spin_outer();
            return 0;
        }
        """#

    /// The helper's path, or nil if it could not be built (no cc).
    public static let path: String? = build(source)

    /// A program whose main thread, once it has printed `ready`, spins in a leaf with no unwind information (no CFI)
    /// with rbp = -1: an unwinder falling back to the frame pointer reads a word at 0xffffffffffffffff, where address
    /// arithmetic wraps. Nil if it could not be built.
    public static let badFramePointerPath: String? = build(
        #"""
        #include <stdio.h>
        __asm__(".text\n.globl spin_with_bad_frame_pointer\nspin_with_bad_frame_pointer:\n"
                "  mov $-1, %rbp\n1:\n  jmp 1b\n");
        void spin_with_bad_frame_pointer(void);
        int main(void) {
            printf("ready\n");
            fflush(stdout);
            spin_with_bad_frame_pointer();
        }
        """#)

    /// A program whose main thread recurses `argv[1]` frames deep (`sw_deep_recurse`), prints `ready`, and pauses
    /// there. Nil if it could not be built.
    public static let deepRecursionPath: String? = build(
        #"""
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        __attribute__((noinline)) int sw_deep_recurse(int depth) {
            if (depth <= 1) {
                printf("ready\n");
                fflush(stdout);
                for (;;) pause();
            }
            return sw_deep_recurse(depth - 1) + 1;
        }
        int main(int argc, char **argv) { return sw_deep_recurse(argc > 1 ? atoi(argv[1]) : 1000); }
        """#)

    /// Builds a C program once per source text, kept in the temporary directory; concurrent test runs each build
    /// and atomically rename. Nil if it could not be built (no cc).
    public static func build(_ source: String) -> String? {
        let hash = source.utf8.reduce(UInt64(5381)) { ($0 &* 33) ^ UInt64($1) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-unwind-tests")
        let binaryPath = directory.appendingPathComponent("helper-\(String(hash, radix: 16))").path
        if access(binaryPath, X_OK) == 0 { return binaryPath }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scratch = "\(binaryPath)-\(getpid())"
        defer { unlink("\(scratch).c") }
        guard (try? source.write(toFile: "\(scratch).c", atomically: false, encoding: .utf8)) != nil,
            let compiler = try? TargetProcess(["/usr/bin/cc", "-O1", "-g", "-o", scratch, "\(scratch).c"]),
            compiler.wait() == 0,
            rename(scratch, binaryPath) == 0
        else { return nil }
        return binaryPath
    }
}
