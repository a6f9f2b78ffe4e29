// The named stall scenarios: what each one does to the main run loop and which function is to blame.

/// A way of stalling the main run loop, chosen with `--scenario`.
///
/// Each scenario reaches the main thread through a different run-loop path (timer, main queue, version-0
/// source, observer) or stalls it in a different way (CPU, sleep, lock, vDSO), because stallwatch must name
/// the culprit in every case.
enum Scenario: String, CaseIterable, Sendable {
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
    case hiccups
    case baseline

    /// The function a symbolicated stack of this scenario's stalls shows, as `Type.method`; `nil` for
    /// `baseline` and `modal`, which never stall.
    var culprit: String? {
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
        case .hiccups: nil
        case .baseline: nil
        }
    }

    /// Whether the program has no run loop and serves its main queue with `dispatchMain()`.
    var usesDispatchMain: Bool { self == .dispatchMain }

    var summary: String {
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
        case .hiccups: "a timer burns 150 ms of CPU every 250 ms: janky, though no single callout is a stall"
        case .baseline: "timers and main-queue blocks do a few ms of work every 50 ms; never stalls"
        }
    }

    /// The `--list` output: one scenario per line, name, summary and culprit.
    static var listing: String {
        let width = allCases.map(\.rawValue.count).max() ?? 0
        return allCases.map { scenario in
            let name = scenario.rawValue + String(repeating: " ", count: width + 2 - scenario.rawValue.count)
            let culprit = scenario.culprit.map { " (culprit: \($0))" } ?? ""
            return name + scenario.summary + culprit
        }.joined(separator: "\n")
    }
}
