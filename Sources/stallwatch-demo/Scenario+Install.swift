// Wiring each scenario to the main run loop: which callout runs the culprit, and who triggers it when.
import Foundation
import Synchronization

extension Scenario {
    /// How long before each `mutex` stall the background sync takes the lock, so it always wins the race.
    ///
    /// At most half the idle gap between stalls: the main thread must have taken and released the lock from the
    /// previous stall before the sync takes it again, or the sync would wait for a main thread blocked on it.
    private static func lockHeadStart(_ timeline: StallTimeline) -> Duration {
        min(.milliseconds(50), (timeline.period - timeline.stallDuration) / 2)
    }

    /// The baseline's rhythm: a timer and a main-queue block per beat, half a beat apart.
    private static let baselineBeat: Duration = .milliseconds(50)

    /// Arms this scenario's stalls (or, for `baseline`, its routine work) on the main run loop.
    ///
    /// Call once on the main thread before running the loop; the work then runs on `timeline`'s schedule.
    func install(on timeline: StallTimeline) {
        let starts = timeline.stallIndices.map(timeline.start(ofStall:))
        switch self {
        case .cpu:
            addStallTimers(timeline) { stall in
                WorkResults.keep(ReportRenderer.renderMonthlyReport(until: stall.deadline))
            }
        case .sleep:
            addStallTimers(timeline) { _ in
                WorkResults.keep(SettingsLoader.reloadSettings(taking: timeline.stallDuration))
            }
        case .mainQueue:
            addMainQueueStalls(timeline, postedBy: "gallery-loader") { stall in
                WorkResults.keep(PhotoGallery.refreshGallery(until: stall.deadline))
            }
        case .source:
            let inbox = PendingStalls()
            let source = MainRunLoopSource {
                for index in inbox.takeAll() {
                    measureStall(index, timeline) { stall in
                        WorkResults.keep(InboxConnection.handleIncomingSignal(until: stall.deadline))
                    }
                }
            }
            BackgroundTimeline.start(named: "inbox-receiver", at: starts) { index in
                inbox.post(index)
                source.signal()
            }
        case .mutex:
            let lockTimes = starts.map { $0 - Self.lockHeadStart(timeline) }
            BackgroundTimeline.start(named: "accounts-sync", at: lockTimes) { _ in
                AccountStore.shared.syncInBackground(holdingLockFor: timeline.stallDuration)
            }
            addStallTimers(timeline) { _ in AccountsView.refreshBalances(from: AccountStore.shared) }
        case .vdso:
            addStallTimers(timeline) { stall in
                WorkResults.keep(AnimationDriver.renderFrame(until: stall.deadline))
            }
        case .observer:
            // Like a UI toolkit: a timer marks layout dirty, and the observer lays out before the loop sleeps.
            let layoutRequests = PendingStalls()
            MainRunLoop.addBeforeWaitingObserver {
                for index in layoutRequests.takeAll() {
                    measureStall(index, timeline) { stall in
                        WorkResults.keep(LayoutEngine.flushPendingLayout(until: stall.deadline))
                    }
                }
            }
            for index in timeline.stallIndices {
                MainRunLoop.addTimer(firingAt: starts[index - 1]) { layoutRequests.post(index) }
            }
        case .twoPhase:
            addStallTimers(timeline) { stall in
                WorkResults.keep(ImportPipeline.importBatch(from: stall.start, until: stall.deadline))
            }
        case .modal:
            for index in timeline.stallIndices {
                MainRunLoop.addTimer(firingAt: timeline.start(ofStall: index)) {
                    let length = ModalSession.runResponsiveSession(lasting: timeline.stallDuration)
                    DemoStderr.modalSession(index: index, length: length)
                }
            }
        case .modalStall:
            let sessionLength = min(timeline.stallDuration + .milliseconds(400), timeline.period - .milliseconds(100))
            for index in timeline.stallIndices {
                MainRunLoop.addTimer(firingAt: timeline.start(ofStall: index)) {
                    _ = ModalSession.runResponsiveSession(lasting: sessionLength, after: .milliseconds(200)) {
                        measureStall(index, timeline) { stall in
                            WorkResults.keep(ModalSession.validateFormFields(until: stall.deadline))
                        }
                    }
                }
            }
        case .dispatchMain:
            addMainQueueStalls(timeline, postedBy: "sync-engine") { stall in
                WorkResults.keep(SyncEngine.applyRemoteChanges(until: stall.deadline))
            }
        case .nestedThenStall:
            installNestedThenStall(timeline)
        case .eventLoops:
            break  // the stalls happen on the pool's own threads: see `EventLoopPool`
        case .loopThread:
            HeartbeatThread.start(timeline)
        case .task:
            ExecutorTask.start(timeline)
        case .pumpLoop:
            break  // the stalls happen between the main thread's own calls to the loop: see `PumpLoop`
        case .hiccups:
            MainRunLoop.addTimer(firingAt: timeline.start(ofStall: 1), repeatingEvery: .milliseconds(250)) {
                WorkResults.keep(HiccupRenderer.redrawEverything(for: .milliseconds(150)))
            }
        case .baseline:
            installRoutineWork(timeline)
        }
    }

    /// Adds one timer per stall, each running `culprit` as a measured stall.
    private func addStallTimers(
        _ timeline: StallTimeline,
        _ culprit: @escaping @Sendable (StallMeasurement) -> Void
    ) {
        for index in timeline.stallIndices {
            MainRunLoop.addTimer(firingAt: timeline.start(ofStall: index)) {
                measureStall(index, timeline, culprit)
            }
        }
    }

    /// Has a background thread post one main-queue block per stall, each running `culprit` as a measured stall.
    private func addMainQueueStalls(
        _ timeline: StallTimeline, postedBy thread: String,
        _ culprit: @escaping @Sendable (StallMeasurement) -> Void
    ) {
        let starts = timeline.stallIndices.map(timeline.start(ofStall:))
        BackgroundTimeline.start(named: thread, at: starts) { index in
            DispatchQueue.main.async { measureStall(index, timeline, culprit) }
        }
    }

    /// Runs `culprit` on the main thread between the start and end of ground-truth stall number `index`.
    func measureStall(_ index: Int, _ timeline: StallTimeline, _ culprit: (StallMeasurement) -> Void) {
        let stall = StallMeasurement(scenario: self, index: index, duration: timeline.stallDuration)
        culprit(stall)
        stall.finish()
    }

    /// Keeps the loop lightly busy for the whole run: a 5 ms timer callout and a 2 ms main-queue block every beat.
    private func installRoutineWork(_ timeline: StallTimeline) {
        let firstBeat = timeline.origin + Self.baselineBeat
        MainRunLoop.addTimer(firingAt: firstBeat, repeatingEvery: Self.baselineBeat) {
            WorkResults.keep(Heartbeat.sendHeartbeat(until: .now() + .milliseconds(5)))
        }
        let blockTimes = sequence(first: firstBeat + Self.baselineBeat / 2) { $0 + Self.baselineBeat }
            .prefix { $0 < timeline.end }
        BackgroundTimeline.start(named: "status-poller", at: Array(blockTimes)) { _ in
            DispatchQueue.main.async {
                WorkResults.keep(StatusBar.refreshClock(until: .now() + .milliseconds(2)))
            }
        }
    }
}

/// Stall numbers handed to the main thread, in order, from whichever thread decided a stall is due.
private final class PendingStalls: Sendable {
    private let indices = Mutex<[Int]>([])

    func post(_ index: Int) { indices.withLock { $0.append(index) } }

    func takeAll() -> [Int] {
        indices.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}
