// An app that embeds the stall monitor: a timer on the main run loop stalls once in a sleep and once in CPU work, and
// the app measures its own sleep. It prints one JSON line per stall (the record `stallwatch run` writes) and one
// `app-sleep` line, then exits.
//
// Arguments: `--helper PATH` (StallMonitor.Configuration.helperPath), `--non-dumpable` (PR_SET_DUMPABLE 0 first),
// `--stop-in-handler` (the handler stops the monitor after the first stall), `--fork` (between the two stalls the app
// forks; the child stops the inherited monitor, starts its own, stalls and stops it, and says how that went),
// `--scrape PORT` (before stopping, the app reads its own STALLWATCH_METRICS endpoint and prints the main thread's
// stall counter in an `app-metrics` line), `--spins N` (N CPU stalls in the same function instead of one: the rate
// limit's fingerprint, 5 per 10 minutes by default or as STALLWATCH_RATE_LIMIT says), `--events` (the monitor's
// events: each stall's `stall-detected` record at its detection too).
import CLibraryUser
import Foundation
import Glibc
import StallwatchAgent
import StallwatchReport

// A test runner may start the app with signals blocked, which only the signal fallback minds (its signal would
// never arrive): start as a program launched from a shell does.
var unblocked = sigset_t()
sigemptyset(&unblocked)
pthread_sigmask(SIG_SETMASK, &unblocked, nil)

let arguments = CommandLine.arguments
let helperPath = arguments.firstIndex(of: "--helper").map { arguments[$0 + 1] }
if arguments.contains("--non-dumpable") { _ = library_user_make_non_dumpable() }

let reporter = JSONLinesReporter(clock: .now())
let output = NSLock()
func emit(_ line: String) {
    output.lock()
    defer { output.unlock() }
    FileHandle.standardOutput.write(line.data(using: .utf8)!)
}

/// The monitor, for its own handler.
final class MonitorBox: @unchecked Sendable {
    var monitor: StallMonitor?
}
let box = MonitorBox()
let stopInHandler = arguments.contains("--stop-in-handler")

let monitor: StallMonitor
do {
    let configuration = StallMonitor.Configuration(threshold: .milliseconds(50), count: 2, helperPath: helperPath)
    if arguments.contains("--events") {
        monitor = try StallMonitor.start(
            configuration, detected: { emit(reporter.renderDetected($0)) }, ended: { emit(reporter.render($0)) })
    } else {
        monitor = try StallMonitor.start(configuration) { report in
            emit(reporter.render(report))
            if stopInHandler { box.monitor?.stop() }
        }
    }
    box.monitor = monitor
} catch {
    FileHandle.standardError.write("LibraryUser: \(error)\n".data(using: .utf8)!)
    exit(70)
}
do {
    _ = try StallMonitor.start { _ in }
    emit("{\"event\":\"second-start\",\"error\":null}\n")
} catch {
    emit("{\"event\":\"second-start\",\"error\":\"\(error)\"}\n")
}

@inline(never) func sleepHalfASecond() {
    var before = timespec()
    var after = timespec()
    clock_gettime(CLOCK_MONOTONIC, &before)
    usleep(500_000)
    clock_gettime(CLOCK_MONOTONIC, &after)
    let elapsed = (after.tv_sec - before.tv_sec) * 1000 + (after.tv_nsec - before.tv_nsec) / 1_000_000
    emit("{\"event\":\"app-sleep\",\"ms\":\(elapsed)}\n")
}

@inline(never) func spinForMilliseconds(_ milliseconds: Int) -> UInt64 {
    let end = Date().addingTimeInterval(Double(milliseconds) / 1000)
    var value: UInt64 = 1
    while Date() < end {
        for _ in 0..<10_000 { value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
    }
    return value
}

func milliseconds(since start: Date) -> Int { Int(Date().timeIntervalSince(start) * 1000) }

/// The forked child's part: it must neither hang on the parent's monitor nor be refused its own.
func runForkedChild() -> Never {
    // A child that hangs is ended by the alarm, which the test sees as a missing `fork-child` line.
    alarm(10)
    let stopping = Date()
    monitor.stop()
    let stopMs = milliseconds(since: stopping)
    var startError = "null"
    var own: StallMonitor?
    do {
        own = try StallMonitor.start(.init(threshold: .milliseconds(50), count: 2, helperPath: helperPath)) { report in
            emit(reporter.render(report))
        }
    } catch {
        startError = "\"\(error)\""
    }
    // Still inside the timer callout the parent was in at the fork: a stall of the child's main thread.
    usleep(400_000)
    own?.stop()
    emit("{\"event\":\"fork-child\",\"pid\":\(getpid()),\"stopMs\":\(stopMs),\"startError\":\(startError)}\n")
    exit(0)
}

nonisolated(unsafe) var forkedChild: pid_t = 0
let forks = arguments.contains("--fork")
let spins = arguments.firstIndex(of: "--spins").flatMap { Int(arguments[$0 + 1]) } ?? 1

let forkStep: [@Sendable () -> Void] = [
    {
        let child = library_user_fork()
        if child == 0 { runForkedChild() }
        forkedChild = child
    }
]
let steps: [@Sendable () -> Void] =
    [{ sleepHalfASecond() }] + (forks ? forkStep : [])
    + Array(repeating: { _ = spinForMilliseconds(400) }, count: spins)
    + [
        {
            if forkedChild > 0 {
                var status: Int32 = 0
                waitpid(forkedChild, &status, 0)
            }
            if let port = arguments.firstIndex(of: "--scrape").flatMap({ Int32(arguments[$0 + 1]) }) {
                var buffer = [CChar](repeating: 0, count: 65536)
                let length = library_user_scrape(port, &buffer, Int32(buffer.count))
                let text = length > 0 ? String(cString: buffer) : ""
                let counter = text.split(separator: "\n").first {
                    $0.hasPrefix("stallwatch_stalls_total{thread=\"main\"} ")
                }
                let stalls = counter?.split(separator: " ").last.map(String.init) ?? "null"
                emit("{\"event\":\"app-metrics\",\"stalls\":\(stalls),\"status\":\"\(text.prefix(15))\"}\n")
            }
            monitor.stop()
            monitor.stop()
            // The helper is the app's only child: stop() ended and reaped it, so none is left, not even a zombie.
            var status: Int32 = 0
            let none = waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD
            emit("{\"event\":\"after-stop\",\"children\":\"\(none ? "none" : "some")\"}\n")
            exit(0)
        }
    ]
for (index, step) in steps.enumerated() {
    Timer.scheduledTimer(withTimeInterval: 0.4 + Double(index) * 0.8, repeats: false) { _ in step() }
}
RunLoop.main.run()
