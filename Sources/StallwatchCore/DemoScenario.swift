// The demo workload's stall scenarios: their names, what each does, and which function is to blame.

/// The stalls the demo workload knows how to cause (`stallwatch demo --scenario NAME`): one list for the demo and
/// the command line that names them.
///
/// Each scenario reaches the main thread through a different run-loop path (timer, main queue, version-0 source,
/// observer) or stalls it in a different way (CPU, sleep, lock, vDSO), because stallwatch must name the culprit in
/// every case.
public enum DemoScenario: String, CaseIterable, Sendable {
    case cpu
    case sleep
    case mainQueue = "main-queue"
    case source
    case mutex
    case vdso
    case observer
    case twoPhase = "two-phase"
    case modal
    case modalStall = "modal-stall"
    case dispatchMain = "dispatch-main"
    case nestedThenStall = "nested-then-stall"
    case pumpLoop = "pump-loop"
    case hiccups
    case baseline
    case eventLoops = "event-loops"
    case loopThread = "loop-thread"
    case task

    /// One line saying what the scenario does, as `stallwatch demo --help` lists it.
    public var summary: String {
        switch self {
        case .cpu: "CPU-bound work in a timer callback."
        case .sleep: "Blocking usleep in a timer callback."
        case .mainQueue: "CPU work in a DispatchQueue.main block."
        case .source: "CPU work in a version-0 run-loop source."
        case .mutex: "Main thread blocked on a lock another thread holds."
        case .vdso: "Spinning on clock_gettime, in the vDSO."
        case .observer: "CPU work inside a beforeWaiting observer."
        case .twoPhase: "One step for 5/6 of a stall, another for 1/6."
        case .modal: "A responsive nested loop in a private mode."
        case .modalStall: "CPU work in a timer inside such a modal session."
        case .dispatchMain: "No run loop (dispatchMain); CPU work in a block."
        case .nestedThenStall: "CPU work in a timer after a nested loop returns."
        case .pumpLoop: "CPU work between calls of a self-pumped loop."
        case .hiccups: "150 ms of CPU every 250 ms: janky, no stall."
        case .baseline: "Short work only; no stall expected."
        case .eventLoops: "NIO-named epoll loops: a blocking and a CPU handler."
        case .loopThread: "CPU work in a timer on a resident run-loop thread."
        case .task: "A detached Swift task blocks its executor thread."
        }
    }

    /// The function a symbolicated stack of this scenario's stalls shows, as `Type.method`; `nil` for
    /// `baseline` and `modal`, which never stall.
    public var culprit: String? {
        switch self {
        case .cpu: "ChecksumEngine.crunchChecksums"
        case .sleep: "DiskCache.waitForSlowDisk"
        case .mainQueue: "ThumbnailDecoder.decodeAllThumbnails"
        case .source: "MessagePump.drainInbox"
        case .mutex: "AccountStore.waitForAccountLock"
        case .vdso: "FrameClock.spinUntilNextFrame"
        case .observer: "LayoutObserver.recomputeLayoutBeforeSleep"
        case .twoPhase: "ImportPipeline.parseRecords"
        case .modal: nil
        case .modalStall: "ModalSession.validateFormFields"
        case .dispatchMain: "SyncEngine.mergeChanges"
        case .nestedThenStall: "AutosaveCoordinator.writeSnapshot"
        case .pumpLoop: "FeedRefresher.rebuildFeed"
        case .hiccups: nil
        case .baseline: nil
        case .eventLoops: Self.eventLoopBlockingCulprit
        case .loopThread: "TelemetryUploader.compressBatch"
        case .task: "PhotoImporter.decodeFullResolution"
        }
    }

    /// `event-loops`: the handler that blocks its loop (odd stalls, on `NIO-ELT-0-#1`).
    public static let eventLoopBlockingCulprit = "AccountLookupHandler.queryDatabaseBlocking"
    /// `event-loops`: the handler that burns its loop's CPU (even stalls, on `NIO-ELT-0-#2`).
    public static let eventLoopCPUCulprit = "ResponseEncoder.compressBody"

    /// Threads a user must select to see this scenario's stalls (`--thread`); nil for the main thread's.
    public var threadSelector: String? {
        switch self {
        case .eventLoops: "NIO-ELT-*"
        case .loopThread: Self.loopThreadName
        case .task: Self.executorThreads
        default: nil
        }
    }

    /// `loop-thread`: the name of the resident run-loop thread.
    public static let loopThreadName = "heartbeat"

    /// `task`: Swift concurrency's executor threads, libdispatch's workers, by the end of their names (the kernel keeps
    /// the last 15 bytes of `com.apple.root.default-qos`).
    public static let executorThreads = "*qos*"

    /// What the scenario does, in a sentence, as `stallwatch-demo --list` shows it.
    public var behaviour: String {
        switch self {
        case .cpu: "a timer callback burns CPU"
        case .sleep: "a timer callback sleeps in one usleep call"
        case .mainQueue: "a block posted to the main queue from another thread burns CPU"
        case .source: "a version-0 run-loop source signalled from another thread burns CPU"
        case .mutex: "a timer callback waits for a lock another thread holds"
        case .vdso: "a timer callback spins on clock_gettime, mostly inside the vDSO"
        case .observer: "a beforeWaiting run-loop observer burns CPU"
        case .twoPhase: "a timer callback parses for 5/6 of the stall, then indexes for the last 1/6"
        case .modal: "a timer callback runs a responsive nested run loop in a private mode; never stalls"
        case .modalStall: "inside such a modal session, a timer in the private mode burns CPU"
        case .dispatchMain: "no run loop: the program calls dispatchMain() and a main-queue block burns CPU"
        case .nestedThenStall:
            "a timer callback runs a responsive nested loop for 300 ms (a private mode, then the default mode), then"
                + " burns CPU in the same callback"
        case .pumpLoop:
            "the main thread pumps RunLoop.run(mode:before:) itself and burns CPU between two calls; after its last"
                + " call it spends 400 ms shutting down, which is no stall"
        case .hiccups: "a timer burns 150 ms of CPU every 250 ms: janky, though no single callout is a stall"
        case .baseline: "timers and main-queue blocks do a few ms of work every 50 ms; never stalls"
        case .eventLoops:
            "three epoll loop threads named as SwiftNIO names them (NIO-ELT-0-#0, #1, #2) while the main thread waits"
                + " in pthread_join; odd stalls block a handler on #1 in usleep, even ones burn CPU in a handler on #2"
                + " (watch with --thread 'NIO-ELT-*')"
        case .loopThread:
            "a resident thread named heartbeat runs its own RunLoop with a repeating timer whose callback burns CPU"
                + " at each stall, while the main run loop stays responsive (watch with --thread heartbeat)"
        case .task:
            "a detached Swift task awaits PhotoImporter.importLibrary() and, at each stall, decodes a photo on its"
                + " executor thread without reaching an await (CPU), while the main run loop stays responsive (watch"
                + " with --thread '*qos*')"
        }
    }
}
