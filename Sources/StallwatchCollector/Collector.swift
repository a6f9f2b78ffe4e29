// The collector: one thread, one poll loop over the agent's socket and stallwatch's signals (and, attached to a
// process without an agent, the external watcher's samples).
import CStallwatchSystem
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchImages
import StallwatchMetrics
import StallwatchSymbols
import StallwatchUnwind

/// Where the collector hands what it finds, as it finds it.
public protocol CollectorOutput: AnyObject {
    /// A stall was just detected: on record at once, so a report file has it even if stallwatch is killed.
    func stallDetected(_ stall: StallReport)
    /// A stall ended (or was still going on when the watch ended).
    func stallFinished(_ stall: StallReport)
    /// Threads found waiting on each other's locks at a stall's capture: said once per cycle.
    func deadlockFound(_ deadlock: DeadlockReport)
    /// A `--fps` reading or run of dropped frames.
    func frameRate(_ frames: FrameRateReport)
    /// Something the user should know while the watch goes on (a `--thread` that matches nothing), said once.
    func notice(_ text: String)
}

/// Receives the agent's messages, captures stalled stacks from outside, and hands reports to its output.
///
/// Everything happens on one thread: a capture's `waitpid` on the stopped thread can never race a `waitpid` for the
/// workload's exit, and reports are written in the order events happen. What is watched, and how the watch ends, is
/// the ``WatchTarget``'s business.
final class Collector {
    /// The agent's socket; nil in external mode.
    private let socket: Int32?
    /// Whether the socket is still worth polling: a hung-up socket would wake the loop at once, for ever.
    private var socketOpen: Bool
    /// When every copy of the workload's end of the socket was closed, `CLOCK_MONOTONIC` ns: at its exit, or
    /// earlier if it closed its inherited descriptors.
    private(set) var hungUpAt: UInt64?
    /// `run`: looks for workload processes started without the agent.
    var preloadWitness: PreloadWitness?
    private let signals: SignalChannel
    let target: any WatchTarget
    let settings: WatchSettings
    let output: any CollectorOutput
    let capturer: StallCapturer

    private var pending: [StallKey: StallCapturer.OpenStall] = [:]
    /// `--rate-limit`: each fingerprint's window; nil reports every stall in full.
    private var rateLimiter: RateLimiter?
    private var finished: [StallReport] = []
    /// Every deadlock found, each cycle once (by ``DeadlockReport/key``).
    private(set) var deadlocks: [DeadlockReport] = []
    private var reportedDeadlocks: Set<[UInt64]> = []
    private(set) var loadedPids: Set<Int32> = []
    private(set) var watchedPids: [Int32] = []
    /// The processes whose agent said it watches something: a process watched only from outside may still have lost
    /// its agent (a wrapper that replaced LD_PRELOAD), which the preload witness names.
    private var agentWatchedPids: Set<Int32> = []
    /// How each watched process is watched, as its agent said.
    private(set) var strategies: [Int32: WatchStrategy] = [:]

    /// How the watched processes were watched, each strategy once, in the order of ``watchedPids``.
    var strategiesUsed: [WatchStrategy] {
        var used: [WatchStrategy] = []
        for pid in watchedPids {
            if let strategy = strategies[pid], !used.contains(strategy) { used.append(strategy) }
        }
        return used
    }
    /// What agents said when they would not watch.
    private(set) var refusals: [String] = []
    /// Messages dropped because their sender could not vouch for what they claimed (see ``MessageGate``).
    private(set) var droppedMessages = 0
    private let gate: MessageGate
    /// The run loop's busy periods, per watched process (the agent's cumulative counts).
    private var busyPeriods: [Int32: LatencyHistogram] = [:]
    /// `--fps`: every second's effective frame rate, in the order the readings arrived (all processes).
    private var frameRates: [Double] = []
    /// Names of processes that sent frame rates: read once, not once a second.
    private var frameRateProcessNames: [Int32: String] = [:]
    /// Each process's threads watched from `/proc` (`--thread`), by pid.
    var threadWatches: [Int32: ThreadWatchSet] = [:]
    /// Selectors already said to match nothing, so each is said once.
    var reportedUnmatched: Set<String> = []
    /// The open stalls found from outside (`/proc` or the kernel trace), not by an agent, and how.
    private var procStalls: [StallKey: WatchMode] = [:]
    /// The kernel trace that follows the threads watched from outside; nil samples them from `/proc`.
    var trace: KernelTrace?
    /// Whether ``trace`` was opened or tried already (`auto` opens it the first time a thread is watched from outside).
    var traceTried: Bool
    /// Why the kernel trace could not be had, when `auto` wanted it.
    var traceWarning: String?
    /// Processes whose event loops stallwatch looks for itself if no agent watches their main loop by then.
    var loopSearchDue: [Int32: UInt64] = [:]
    /// Processes whose event-loop threads are watched because nothing else was, and the loops found, said in one line.
    var loopsSearched: Set<Int32> = []
    var loopsFound: [Int32: [String]] = [:]
    /// `--metrics`: where the numbers go; nil without it. The threads watched, and when they were last checked alive.
    var metrics: MetricsRecorder?
    var metricsThreads: Set<WatchedThread> = []
    var metricsThreadsCheckedAt: UInt64 = 0

    struct StallKey: Hashable {
        let pid: Int32
        let identifier: Int
    }

    /// - Parameter watchesMainFromProc: no agent watches the main thread (attach's external mode), so the `/proc`
    ///   watch of the target's threads includes it.
    init(
        socket: Int32?, signals: SignalChannel, target: any WatchTarget, settings: WatchSettings,
        output: any CollectorOutput, trace: KernelTrace? = nil, watchesMainFromProc: Bool = false
    ) {
        self.trace = trace
        traceTried = trace != nil
        self.socket = socket
        self.socketOpen = socket != nil
        self.signals = signals
        self.target = target
        self.settings = settings
        self.output = output
        capturer = StallCapturer(socket: socket, maxFrames: settings.maxFrames)
        rateLimiter = settings.rateLimit.map(RateLimiter.init)
        gate = MessageGate(
            isWatchable: { [target] in target.mayWatch($0) },
            threadOf: { ThreadInspector.thread(of: $0, agentThread: $1, agentPid: $2) })
        if let pid = target.attachedPid { watchThreads(of: pid, agentWatchesMain: !watchesMainFromProc) }
        scheduleLoopSearch(of: target.firstPid, now: monotonicNow())
    }

    /// The run's frame-rate series for the summary; nil without `--fps`.
    var framesPerSecond: [Double]? { settings.frameRate == nil ? nil : frameRates }

    /// A warning when messages were dropped; empty otherwise.
    var droppedMessageWarning: [String] { Self.droppedMessageWarning(droppedMessages) }

    static func droppedMessageWarning(_ count: Int) -> [String] {
        guard count > 0 else { return [] }
        let what =
            count == 1
            ? "1 message on the agent's socket was dropped: it was not understood, or named a process, thread or time"
                + " its sender could not vouch for"
            : "\(count) messages on the agent's socket were dropped: they were not understood, or named a process,"
                + " thread or time their sender could not vouch for"
        return [what]
    }

    /// Every watched process's busy periods together; nil if no agent sent any.
    var busyPeriodHistogram: LatencyHistogram? {
        guard !busyPeriods.isEmpty else { return nil }
        var merged = LatencyHistogram()
        for histogram in busyPeriods.values { merged.merge(histogram) }
        return merged
    }

    /// Runs until the target's watch is over.
    func run() {
        var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
        while !target.isFinished {
            var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0)]
            if socketOpen, let socket { descriptors.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
            let now = monotonicNow()
            let wake =
                ([target.nextWake(now: now)] + threadWatches.values.map(\.nextWake) + loopSearchDue.values).min() ?? now
            let timeout = wake > now ? Int32(min((wake - now + 999_999) / 1_000_000, 60_000)) : 0
            if poll(&descriptors, nfds_t(descriptors.count), timeout) < 0, errno != EINTR { break }
            if descriptors[0].revents != 0 { target.received(signals.drain()) }
            if descriptors.count > 1 {
                let events = descriptors[1].revents
                // Messages queued before a hang-up are read first; then the socket is out of the poll set for good,
                // which a hung-up socket would otherwise keep readable forever.
                let endOfStream = events & Int16(POLLIN) != 0 && receiveMessages(into: &buffer)
                if endOfStream || events & Int16(POLLHUP | POLLERR) != 0 {
                    socketOpen = false
                    hungUpAt = monotonicNow()
                    target.agentHungUp()
                }
            }
            for message in target.step(now: monotonicNow()) { handle(message) }
            if let preloadWitness, loadedPids.count > agentWatchedPids.count {
                preloadWitness.check(loadedPids.subtracting(agentWatchedPids).sorted(), now: monotonicNow())
            }
            searchLoops(now: monotonicNow())
            stepThreadWatches(now: monotonicNow())
            announceLoopsFound()
            if metrics != nil { checkWatchedThreads(now: monotonicNow()) }
        }
        // Messages sent just before the workload exited are still queued: read them all.
        if socketOpen { _ = receiveMessages(into: &buffer) }
        finishThreadWatches(now: monotonicNow())
    }

    /// Every stall seen, finished ones first, then those still in progress when the watch ended.
    func closeStalls() -> [StallReport] {
        let unfinished = pending.values.sorted {
            ($0.assembler.report.start, $0.assembler.report.pid) < ($1.assembler.report.start, $1.assembler.report.pid)
        }
        pending.removeAll()
        // Still outside its loop at the end: the program left its loop for good, which is no stall.
        let now = monotonicNow()
        for var stall in unfinished where !stall.assembler.report.isOutsideLoop {
            stall.assembler.watchEnded(at: now)
            close(stall)
        }
        return finished
    }

    // MARK: Events

    /// Reads every queued message. Returns true at the end of the stream: every copy of the workload's end is
    /// closed (the agent never sends an empty datagram).
    private func receiveMessages(into buffer: inout [UInt8]) -> Bool {
        guard let socket else { return false }
        while true {
            var sender: Int32 = 0
            let received = buffer.withUnsafeMutableBytes {
                sw_recv_from_process(socket, $0.baseAddress, UInt($0.count), Int32(MSG_DONTWAIT), &sender)
            }
            if received < 0, errno == EINTR { continue }
            if received == 0 { return true }
            guard received > 0 else { return errno != EAGAIN && errno != EWOULDBLOCK }
            guard let message = WireFormat.decode(AgentMessage.self, from: buffer.prefix(Int(received))) else {
                droppedMessages += 1
                continue
            }
            guard let admitted = gate.admit(message, sender: sender, now: monotonicNow()) else {
                droppedMessages += 1
                continue
            }
            handle(admitted)
        }
    }

    func handle(_ message: AgentMessage, fromProc: Bool = false) {
        switch message {
        case .busyPeriods(let pid, let buckets, let longest):
            // Each message holds the agent's counts so far: keep the latest per process.
            var histogram = LatencyHistogram(sparse: buckets)
            histogram.exactMaximum = longest
            busyPeriods[pid] = histogram
            metrics?.update { $0.busyPeriods(histogram, of: pid) }
        case .frameRate(let pid, let start, let end, let frames, let dropped):
            let reading = FrameRateMonitor.Reading(start: start, end: end, frames: frames, dropped: dropped)
            frameRates.append(reading.framesPerSecond)
            writeFrameRate(pid: pid, event: .reading(reading))
        case .frameDrops(let pid, let begin, let end, let total, let dropped):
            writeFrameRate(
                pid: pid,
                event: .drops(FrameRateMonitor.DropRecord(begin: begin, end: end, total: total, dropped: dropped)))
        case .loaded(let pid, _):
            loadedPids.insert(pid)
            // The process exec'd another program (a wrapper's): its loops are to be found anew.
            if loopsSearched.remove(pid) != nil, threadWatches[pid]?.searchingLoops == true,
                settings.threads.isMainOnly
            {
                threadWatches[pid] = nil
            }
            if threadWatches[pid] == nil { watchThreads(of: pid, agentWatchesMain: true) }
            scheduleLoopSearch(of: pid, now: monotonicNow())
        case .mainUnwatched(let pid):
            // Nothing to wait for: the agent will not watch this program's main loop. A main thread `--thread` picks
            // (`all`) is watched from outside then, as any other thread is (a C epoll loop, asyncio).
            if loopSearchDue[pid] != nil { loopSearchDue[pid] = monotonicNow() }
            threadWatches[pid]?.include(pid)
        case .refused(let pid, let reason):
            refusals.append("the agent did not watch pid \(pid): \(reason)")
        case .watching(let pid, let tid, let strategy):
            if !watchedPids.contains(pid) { watchedPids.append(pid) }
            if metrics != nil { watchedThread(pid: pid, tid: tid) }
            if !fromProc { agentWatchedPids.insert(pid) }
            if fromProc {
                if loopsSearched.contains(pid) {
                    loopsFound[pid, default: []].append(
                        "\(ThreadInspector.name(pid: pid, tid: tid) ?? "?") (tid \(tid))")
                }
            } else if tid != pid {
                // The agent watches this thread's run loop, exactly: no longer a /proc watch's.
                for message in threadWatches[pid]?.exclude(tid, now: monotonicNow()) ?? [] {
                    handle(message, fromProc: true)
                }
            } else if let strategy {
                strategies[pid] = strategy
                // A main loop the agent found late, after stallwatch looked for loops itself: the agent's now.
                if loopsSearched.contains(pid) {
                    for message in threadWatches[pid]?.exclude(pid, now: monotonicNow()) ?? [] {
                        handle(message, fromProc: true)
                    }
                }
            }
        case .stallBegan(let pid, let tid, let onset):
            guard isSelected(pid: pid, tid: tid, fromProc: fromProc, onset: onset) else {
                // The agent watches the main loop whatever `--thread` says; a main loop not selected is not reported.
                capturer.reply(.captured(identifier: onset.identifier))
                return
            }
            var stall = StallCapturer.OpenStall(
                assembler: StallAssembler(
                    onset: onset, pid: pid, tid: tid, processName: ThreadInspector.processName(pid: pid),
                    settings: settings,
                    captureMethod: .ptrace, threadName: ThreadInspector.name(pid: pid, tid: tid)))
            // Running or waiting to run: if it waits for a CPU, the census at its end says who had them.
            let runnable = ThreadInspector.statFields(pid: pid, tid: tid)?.first == "R"
            stall.assembler.startCPUClock(
                cpu: ThreadInspector.cpuTime(pid: pid, tid: tid),
                runQueue: ThreadInspector.runQueueTime(pid: pid, tid: tid),
                census: runnable ? ThreadInspector.censusReading(stalledPid: pid, now: monotonicNow()) : nil,
                now: monotonicNow())
            capturer.sample(&stall, tid: tid, rateLimiter: &rateLimiter)
            if fromProc { procStalls[stall.key] = threadWatches[pid]?.mode(of: tid) ?? .external }
            // Outside the loop, only the thread's return to its loop makes a stall (see `StallReport.isOutsideLoop`).
            if !onset.phase.isOutsideLoop {
                output.stallDetected(stall.assembler.report)
                metricsStallDetected(stall.assembler.report)
            }
            reportDeadlock(found: &stall)
            pending[stall.key] = stall
        case .stallSample(let pid, let tid, let identifier, _):
            // A stall over the rate limit keeps the sample that named it: the thread is not stopped again.
            guard var stall = pending[StallKey(pid: pid, identifier: identifier)], !stall.assembler.isSuppressed else {
                capturer.reply(.captured(identifier: identifier))
                return
            }
            capturer.sample(&stall, tid: tid, rateLimiter: &rateLimiter)
            reportDeadlock(found: &stall)
            pending[stall.key] = stall
        case .stallEnded(let pid, let identifier, let endedAt):
            guard var stall = pending.removeValue(forKey: StallKey(pid: pid, identifier: identifier)) else { return }
            stall.assembler.end(at: endedAt)
            close(stall)
        case .inProcessSample(
            let pid, let identifier, let addresses, let callers, let capturedAt, let imageMap, let error):
            guard var stall = pending[StallKey(pid: pid, identifier: identifier)] else { return }
            capturer.receiveInProcessSample(
                &stall, addresses: addresses, asyncCallers: callers, capturedAt: capturedAt, imageMap: imageMap,
                error: error)
            stall.assembler.applyRateLimit(&rateLimiter)
            pending[stall.key] = stall
        }
    }

    /// Says a deadlock the stall's capture found, unless the same cycle was said already (its other threads' stalls).
    private func reportDeadlock(found stall: inout StallCapturer.OpenStall) {
        guard let deadlock = stall.deadlock else { return }
        stall.deadlock = nil
        guard reportedDeadlocks.insert(deadlock.key).inserted else { return }
        deadlocks.append(deadlock)
        output.deadlockFound(deadlock)
    }

    private func writeFrameRate(pid: Int32, event: FrameRateMonitor.Event) {
        let name = frameRateProcessNames[pid] ?? ThreadInspector.processName(pid: pid)
        frameRateProcessNames[pid] = name
        output.frameRate(FrameRateReport(pid: pid, processName: name, event: event))
    }

    /// Finishes a stall: its CPU share and how it was seen, then the report.
    private func close(_ stall: StallCapturer.OpenStall) {
        var assembler = stall.assembler
        // All its samples are in: it counts towards the fingerprint its report shows (or, named by no sample, is decided).
        assembler.applyRateLimit(&rateLimiter, atEnd: true)
        if let mode = procStalls.removeValue(forKey: stall.key) {
            // Seen from outside, under `run` or beside an agent too: /proc's resolution, or the trace's exact times.
            assembler.note(attached: AttachedStall(mode: mode, resolutionNanoseconds: settings.thresholdNanoseconds))
        } else if let attached = target.attachedStall(identifier: assembler.identifier) {
            assembler.note(attached: attached)
        }
        let (pid, tid) = (assembler.report.pid, assembler.report.tid)
        let report = assembler.finished(
            cpuNow: ThreadInspector.cpuTime(pid: pid, tid: tid),
            runQueueNow: ThreadInspector.runQueueTime(pid: pid, tid: tid),
            censusNow: assembler.wantsCensus
                ? ThreadInspector.censusReading(stalledPid: pid, now: monotonicNow()) : nil,
            now: monotonicNow())
        output.stallFinished(report)
        metricsStallFinished(report, captureNanoseconds: stall.captureNanoseconds)
        finished.append(report)
    }
}
