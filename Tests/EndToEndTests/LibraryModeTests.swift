// Library mode as a user's package gets it: Tests/Fixtures/LibraryUser depends on this repository by path, links the
// StallwatchAgent product, starts the monitor and stalls in a sleep and in CPU work.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

/// Builds the fixture package once (only what it links: the agent and its modules, in `.build/library-user`) and
/// puts the already built `stallwatch` beside it, where an app ships its capture helper.
enum LibraryUserApp {
    static let built: Result<String, BuildFailure> = {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let scratch = repository + "/.build/library-user"
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = [
            "swift", "build", "--package-path", repository + "/Tests/Fixtures/LibraryUser", "--scratch-path", scratch,
        ]
        let log = Pipe()
        build.standardOutput = log
        build.standardError = log
        do { try build.run() } catch { return .failure(BuildFailure(log: "\(error)")) }
        let output = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        build.waitUntilExit()
        guard build.terminationStatus == 0 else { return .failure(BuildFailure(log: output)) }
        let helper = scratch + "/debug/stallwatch"
        try? FileManager.default.removeItem(atPath: helper)
        try? FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: Products.stallwatch)
        return .success(scratch + "/debug/LibraryUser")
    }()

    struct BuildFailure: Error, CustomStringConvertible {
        let log: String
        var description: String { "the fixture package did not build:\n" + log }
    }

    /// What one run of the app printed: its stalls (the JSON records `stallwatch run` writes) and its own lines.
    struct Run {
        let stalls: [StallRecord]
        let lines: [[String: String]]
        let status: Int32
        /// What the app (and its agent) said on stderr.
        var stderr = ""
        /// Everything the app printed, in order.
        var text = ""

        func line(_ event: String) -> [String: String]? { lines.first { $0["event"] == event } }
        var sleptMs: Double? { line("app-sleep")?["ms"].flatMap(Double.init) }
    }

    /// Runs the app (`executable`, else the built fixture) with `arguments`, and `environment` added to the test's.
    static func run(
        _ arguments: [String] = [], executable: String? = nil, droppingPtraceCapability: Bool = false,
        asNobody: Bool = false, environment: [String: String] = [:], capturingStderr: Bool = false
    ) throws -> Run {
        var app = try executable ?? built.get()
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if asNobody {
            if executable == nil {
                // The app finds its library ($ORIGIN) and its helper beside it: copied together if need be.
                let directory = (app as NSString).deletingLastPathComponent
                app = try Reachable.copies(of: [app, directory + "/libStallwatchAgent.so", directory + "/stallwatch"])[
                    0]
            }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", app] + arguments
        } else if droppingPtraceCapability {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--inh-caps=-all", "--bounding-set=-sys_ptrace", "--", app] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: app)
            process.arguments = arguments
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        if capturingStderr { process.standardError = errors }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // A monitor that hangs the app (a stop() waiting for itself) fails the test instead of hanging it.
        let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: killer)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let said =
            capturingStderr ? String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) : ""
        process.waitUntilExit()
        killer.cancel()
        let lines = text.split(separator: "\n").compactMap { line -> [String: String]? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String != "stall"
            else { return nil }
            return object.mapValues { "\($0)" }
        }
        return Run(
            stalls: try JSONLines.records(in: text).compactMap(\.stall), lines: lines,
            status: process.terminationStatus, stderr: said, text: text)
    }
}

/// Capture helpers that never answer: one that never says it is ready, and one that says so on its socket (descriptor
/// 3, kept open in a variable) and then never answers a request.
let muteHelperScripts = [
    "exec sleep 30",
    """
    exec python3 -c 'import json, os, socket, time
    helper = socket.socket(fileno=3)
    helper.send(json.dumps({"ready": {"pid": os.getpid(), "version": "\(StallwatchVersion.string)"}}).encode())
    time.sleep(30)'
    """,
]

@Suite(.serialized) struct LibraryModeTests {
    @Test func helperCapturesWithPtraceAndTheAppsSleepKeepsItsLength() throws {
        let run = try LibraryUserApp.run()
        #expect(run.status == 0)
        // Under the signal capture this 500 ms sleep lasted about 100 ms: each signal cuts it short.
        let slept = try #require(run.sleptMs)
        #expect(slept >= 490 && slept < 700, "the app's usleep(500 ms) lasted \(slept) ms")
        try #require(run.stalls.count == 2, "\(run.stalls.map(\.culprit?.symbol))")
        let sleep = run.stalls[0]
        let spin = run.stalls[1]
        #expect(sleep.culprit?.symbol == "sleepHalfASecond()")
        #expect(spin.culprit?.symbol == "spinForMilliseconds(_:)")
        // File and line come from the helper's DWARF reader: the agent alone names functions without lines.
        #expect(sleep.culprit?.file?.hasSuffix("LibraryUser/main.swift") == true)
        #expect(sleep.culprit?.line != nil)
        let sleepMs = try #require(sleep.durationMs.value)
        let spinMs = try #require(spin.durationMs.value)
        #expect(sleepMs > 450 && sleepMs < 800, "sleep stall \(sleepMs) ms")
        #expect(spinMs > 350 && spinMs < 800, "CPU stall \(spinMs) ms")
        #expect(sleep.thread.value?.blockedOn == "sleep")
        #expect(spin.thread.value?.verdict == "cpuBound")
        for stall in run.stalls {
            #expect(stall.capture.method == "ptrace")
            #expect(stall.capture.note == nil)
            #expect(stall.samples.count >= 3)
        }
        // Warm captures stop the thread for tens of microseconds; 2 ms leaves room for a loaded machine.
        let warm = run.stalls.flatMap { $0.samples.dropFirst().compactMap(\.stoppedMs) }.sorted()
        let median = try #require(warm.isEmpty ? nil : warm[warm.count / 2])
        #expect(median < 2, "median stop of warm captures: \(median) ms")
        #expect(run.line("second-start")?["error"]?.contains("already running") == true)
        #expect(run.line("after-stop")?["children"] == "none")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to become nobody"))
    func anUnprivilegedAppCapturesThroughItsHelper() throws {
        // Without CAP_SYS_PTRACE the helper, the app's child, may trace its parent only because the app allowed it
        // (PR_SET_PTRACER, which Yama's ptrace_scope 1 asks for) and they share a user.
        let run = try LibraryUserApp.run(asNobody: true)
        #expect(run.status == 0)
        try #require(run.stalls.count == 2)
        #expect(run.stalls.map(\.capture.method) == ["ptrace", "ptrace"], "\(run.stalls.map(\.capture.note))")
        #expect(try #require(run.sleptMs) >= 490)
    }

    /// `start(_:events:)`: each stall is told of at its detection, with its first stack and no end yet, before its
    /// whole report; a service that deadlocks would see the first.
    @Test func eachStallIsToldOfAtItsDetectionAndAtItsEnd() throws {
        let run = try LibraryUserApp.run(["--events"])
        #expect(run.status == 0)
        try #require(run.stalls.count == 2, "\(run.text)")
        let order = run.text.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let event = object["event"] as? String, event.hasPrefix("stall"), let id = object["id"] as? Int
            else { return nil }
            return "\(event) \(id)"
        }
        let ids = run.stalls.map(\.id)
        #expect(order == ids.flatMap { ["stall-detected \($0)", "stall \($0)"] }, "\(order)")
        let detected = run.lines.filter { $0["event"] == "stall-detected" }
        #expect(detected.count == 2)
        for record in detected {
            #expect(record["samples"]?.contains("frames") == true, "a first stack: \(record)")
            #expect(record["durationMs"] == nil, "no end yet: \(record)")
        }
    }

    @Test func theHandlerMayStopTheMonitor() throws {
        let run = try LibraryUserApp.run(["--stop-in-handler"])
        #expect(run.status == 0)
        // Stopped after the first stall: the CPU stall is not watched, and the helper is gone.
        #expect(run.stalls.map(\.culprit?.symbol) == ["sleepHalfASecond()"])
        #expect(run.line("after-stop")?["children"] == "none")
    }

    @Test func missingHelperFallsBackToSignalCaptureAndSaysWhy() throws {
        let run = try LibraryUserApp.run(["--helper", "/nonexistent/stallwatch"])
        #expect(run.status == 0)
        try #require(run.stalls.count == 2)
        for stall in run.stalls {
            #expect(stall.capture.method == "signal", "\(stall.capture.note ?? "")")
            #expect(stall.capture.note?.contains("was not found (looked for /nonexistent/stallwatch)") == true)
        }
        #expect(run.stalls[1].culprit?.symbol == "spinForMilliseconds(_:)")
    }

    @Test func aForkedChildStopsAtOnceAndStartsItsOwnWatch() throws {
        let run = try LibraryUserApp.run(["--fork"])
        #expect(run.status == 0)
        // The child: stop() of the inherited monitor returned at once (it used to wait for a watcher thread the
        // child does not have), and a monitor of its own started and caught the child's stall.
        let child = try #require(run.line("fork-child"), "the child hung or died: \(run.lines)")
        #expect(try #require(child["stopMs"].flatMap(Int.init)) < 100)
        #expect(child["startError"] == "<null>")
        let childPid = try #require(child["pid"].flatMap(Int.init))
        let childStalls = run.stalls.filter { $0.pid == childPid }
        #expect(childStalls.count == 1)
        #expect(childStalls.first?.culprit?.symbol == "runForkedChild()")
        // The parent: its two stalls, captured as before, its helper ended with it. (On a loaded machine the fork
        // itself, copying the app's page tables, may take long enough to be a stall of its own.)
        let parentStalls = run.stalls.filter { $0.pid != childPid }
        let expected = ["sleepHalfASecond()", "spinForMilliseconds(_:)"]
        #expect(parentStalls.compactMap(\.culprit?.symbol).filter(expected.contains) == expected)
        for stall in parentStalls {
            #expect(stall.capture.method == "ptrace")
            let symbols = stall.samples.flatMap(\.frames).compactMap(\.symbol)
            #expect(
                expected.contains(stall.culprit?.symbol ?? "") || symbols.contains { $0.contains("fork") },
                "a parent stall outside the app's two: \(symbols.prefix(8))")
        }
        #expect(run.line("after-stop")?["children"] == "none")
    }

    /// A helper that never says it is ready, and one that says so and then never answers a request.
    @Test(arguments: muteHelperScripts)
    func aHelperThatNeverAnswersLosesNoStallAndNeverHoldsTheWatcher(script: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-mute-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let helper = directory + "/helper"
        FileManager.default.createFile(
            atPath: helper, contents: Data("#!/bin/sh\n\(script)\n".utf8), attributes: [.posixPermissions: 0o755])
        let run = try LibraryUserApp.run(["--helper", helper])
        #expect(run.status == 0)
        // Both stalls, with their lengths (a watcher held 3 s per capture lost one and cut the other to 0 ms), the
        // app's sleep untouched, and each report saying why it has no stack.
        try #require(run.stalls.count == 2, "\(run.stalls.map(\.capture.note))")
        let sleepMs = try #require(run.stalls[0].durationMs.value)
        let spinMs = try #require(run.stalls[1].durationMs.value)
        #expect(sleepMs > 450 && sleepMs < 800, "sleep stall \(sleepMs) ms")
        #expect(spinMs > 350 && spinMs < 800, "CPU stall \(spinMs) ms")
        for stall in run.stalls {
            #expect(stall.capture.method == "none")
            #expect(stall.capture.note?.contains("capture helper") == true, "\(stall.capture.note ?? "")")
        }
        #expect(try #require(run.sleptMs) >= 490)
    }

    @Test func refusedPtraceFallsBackToSignalCaptureAndSaysWhy() throws {
        // A non-dumpable app may be traced only with CAP_SYS_PTRACE, which root loses here.
        let run = try LibraryUserApp.run(["--non-dumpable"], droppingPtraceCapability: getuid() == 0)
        #expect(run.status == 0)
        try #require(run.stalls.count == 2)
        for stall in run.stalls {
            #expect(stall.capture.method == "signal")
            #expect(stall.capture.note?.contains("ptrace was not permitted") == true)
        }
    }

    /// `STALLWATCH_METRICS` in the app: its own endpoint counts its stalls; a bad value or a port in use is one line on
    /// its stderr, and the app runs on, watched as before.
    @Test func theAppServesItsOwnMetrics() throws {
        var served: LibraryUserApp.Run?
        // A port free a moment ago may be taken by the time the app listens: try another.
        for _ in 0..<3 {
            let port = try FreePort.pick()
            let run = try LibraryUserApp.run(
                ["--scrape", "\(port)"], environment: ["STALLWATCH_METRICS": "127.0.0.1:\(port)"], capturingStderr: true
            )
            if run.stderr.contains("serving metrics on http://127.0.0.1:\(port)/metrics") {
                served = run
                break
            }
        }
        let run = try #require(served, "the app never served its metrics")
        #expect(run.status == 0)
        #expect(run.stalls.count == 2)
        let scraped = try #require(run.line("app-metrics"))
        #expect(scraped["status"] == "HTTP/1.1 200 OK")
        #expect(scraped["stalls"] == "\(run.stalls.count)", "the counter the app scraped before it stopped")

        let (port, occupied) = try FreePort.occupied()
        defer { close(occupied) }
        for value in ["nonsense", "127.0.0.1:\(port)"] {
            let run = try LibraryUserApp.run(environment: ["STALLWATCH_METRICS": value], capturingStderr: true)
            #expect(run.status == 0, "\(value)")
            #expect(run.stalls.count == 2, "\(value): the app is watched as before")
            let said = run.stderr.split(separator: "\n").filter { $0.contains("STALLWATCH_METRICS") }
            #expect(said.count == 1, "\(value): \(run.stderr)")
            #expect(said.first?.hasPrefix("stallwatch agent: warning: STALLWATCH_METRICS") == true, "\(said)")
        }
    }
}
