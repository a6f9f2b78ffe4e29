// Item 3: what one stack capture costs the stalled process, and what naming its frames costs stallwatch.
import Foundation
import StallwatchImages
import StallwatchSymbols
import StallwatchUnwind

/// Captures a stalled demo's main thread many times, as the collector does, timing each step; then does
/// the same to the gap target, which says from inside how long each capture stopped it.
///
/// The bench is the parent of both targets, so it may ptrace them under Yama's `ptrace_scope` 1.
struct CaptureBenchmark {
    let products: BuildProducts

    static let demoSamples = 50
    static let gapSamples = 30
    /// Between captures, so the target runs on and the caches stay as warm as a collector's would.
    static let interval = 0.02
    static let stoppedTarget = 200_000.0
    static let culprit = "ChecksumEngine.crunchChecksums"

    /// One capture of the demo: nanoseconds for each step.
    private struct Timing {
        let stopped: Double
        let stopWait: Double
        let capture: Double
        let imageMap: Double
        let symbolication: Double
        let frames: Int
        let culpritFound: Bool
    }

    func run() throws(BenchError) -> SectionReport {
        BenchOutput.progress("capture: \(Self.demoSamples) samples of stallwatch-demo --scenario cpu")
        let timings = try sampleDemo()
        BenchOutput.progress("capture: \(Self.gapSamples) samples of the gap target")
        let (sampler, inside) = try sampleGapTarget()
        let libraryMode = try LibraryModeBenchmark(products: products).run()
        let rateLimit = try RateLimitBenchmark(products: products).run()

        var table = ResultTable(
            "Capture: RemoteStackSampler on a stalled stallwatch-demo --scenario cpu (\(timings.count) samples, "
                + "\(Int(Self.interval * 1000)) ms apart) and on the gap target (\(inside.count) samples)",
            header: ["measure", "first (cold)", "warm median", "warm p95"])
        func add(_ name: String, _ values: [Double]) {
            let warm = Array(values.dropFirst())
            table.add([
                name, Format.milliseconds(values.first ?? 0), Format.milliseconds(warm.median),
                Format.milliseconds(warm.percentile(95)),
            ])
        }
        add("demo: main thread stopped (sampler's clock)", timings.map(\.stopped))
        add("demo: … of which waiting for it to stop", timings.map(\.stopWait))
        add("demo: whole capture call", timings.map(\.capture))
        add("demo: image map (ProcessImages.capture)", timings.map(\.imageMap))
        add("demo: symbolication (Symbolicator)", timings.map(\.symbolication))
        add(
            "demo: whole sample (capture, image map, names)",
            timings.map { $0.capture + $0.imageMap + $0.symbolication })
        add("gap target: stopped (sampler's clock)", sampler)
        add("gap target: stopped (target's own clock)", inside)

        let found = timings.filter(\.culpritFound).count
        var report = SectionReport(tables: [table] + libraryMode.tables + rateLimit.tables)
        report.lines.append(
            "frames per stack: median \(Int(timings.map { Double($0.frames) }.median)); "
                + "\(Self.culprit) named in \(found)/\(timings.count) stacks")
        let stoppedWarm = Array(timings.map(\.stopped).dropFirst()).median
        let insideWarm = Array(inside.dropFirst()).median
        let limit = "PTRACE_INTERRUPT's stop and the wake-up after detach go through the scheduler"
        report.targets +=
            [
                TargetCheck(
                    "main thread stopped, warm median (sampler's clock)", measured: Format.milliseconds(stoppedWarm),
                    target: "≤ 0.200 ms", met: stoppedWarm <= Self.stoppedTarget, limit: limit),
                TargetCheck(
                    "main thread stopped, warm median (target's own clock)", measured: Format.milliseconds(insideWarm),
                    target: "≤ 0.200 ms", met: insideWarm <= Self.stoppedTarget, limit: limit),
            ] + libraryMode.targets + rateLimit.targets
        return report
    }

    /// Starts a demo whose one stall lasts far longer than the sampling, and samples it as the collector would.
    private func sampleDemo() throws(BenchError) -> [Timing] {
        try products.withStalledDemo(lasting: 10) { demo throws(BenchError) in try sample(demo) }
    }

    /// Captures, maps and names the stalled demo's main thread ``demoSamples`` times.
    private func sample(_ demo: ChildProcess) throws(BenchError) -> [Timing] {
        let sampler = RemoteStackSampler()
        let symbolicator = CollectorSymbolicator.make(environment: ProcessInfo.processInfo.environment)
        var timings: [Timing] = []
        for _ in 0..<Self.demoSamples {
            let start = MonotonicClock.now()
            let stack: RemoteStack
            do {
                stack = try sampler.capture(pid: demo.pid, tid: demo.pid)
            } catch {
                throw BenchError("capturing stallwatch-demo: \(error)")
            }
            let captured = MonotonicClock.now()
            let images = ProcessImages.capture(pid: demo.pid)
            let mapped = MonotonicClock.now()
            let frames = symbolicator.symbolicate(stack.addresses, images: images)
            let named = MonotonicClock.now()
            timings.append(
                Timing(
                    stopped: Double(stack.stoppedNanoseconds), stopWait: Double(stack.stopWaitNanoseconds),
                    capture: Double(captured - start), imageMap: Double(mapped - captured),
                    symbolication: Double(named - mapped), frames: frames.count,
                    culpritFound: frames.contains { $0.symbol?.contains(Self.culprit) ?? false }))
            MonotonicClock.sleep(seconds: Self.interval)
        }
        return timings
    }

    /// Captures the gap target while it spins and pairs each capture with the gaps its own clock recorded.
    ///
    /// - Returns: For each capture, the stopped time by the sampler's clock and by the target's: the gaps that
    ///   began before the capture call returned, counted from when the call began. A gap may begin earlier when
    ///   the target was waiting for a CPU as the capture began: it cannot stop before it runs again.
    private func sampleGapTarget() throws(BenchError) -> (sampler: [Double], inside: [Double]) {
        let target = try ChildProcess([products.bench, "gap-target", "--seconds", "3"])
        _ = try target.waitForLine(fromStandardError: false, timeout: 10) { $0 == GapRecorder.readyLine }
        let sampler = RemoteStackSampler()
        var windows: [(start: UInt64, end: UInt64, stopped: UInt64)] = []
        for _ in 0..<Self.gapSamples {
            let start = MonotonicClock.now()
            do {
                let stack = try sampler.capture(pid: target.pid, tid: target.pid)
                windows.append((start, MonotonicClock.now(), stack.stoppedNanoseconds))
            } catch {
                target.send(SIGKILL)
                _ = try? target.wait(timeout: 10)
                throw BenchError("capturing the gap target: \(error)")
            }
            MonotonicClock.sleep(seconds: Self.interval)
        }
        let status = try target.wait(timeout: 20)
        guard status == 0 else { throw BenchError("the gap target exited with \(status)") }
        let gaps = GapRecorder.gaps(in: target.standardOutput)
        let inside = windows.map { window in
            gaps.filter { $0.start <= window.end && $0.start + $0.length > window.start }.reduce(0.0) { sum, gap in
                sum + Double(gap.start + gap.length - max(gap.start, window.start))
            }
        }
        return (windows.map { Double($0.stopped) }, inside)
    }
}
