// The agent's messages are untrusted: only what the kernel vouches for (the sender's pid) is believed.
import StallwatchCore
import Testing

@testable import StallwatchCollector

@Suite struct MessageGateTests {
    /// Process 500 is the workload; it has threads 500 and 501. Process 900 is someone else's.
    let gate = MessageGate(
        isWatchable: { $0 == 500 },
        threadOf: { pid, thread, agentPid in
            guard pid == 500 else { return nil }
            if thread == agentPid { return pid }
            return thread == 501 ? 501 : nil
        })
    let now: UInt64 = 10_000_000_000
    let onset = StallOnset(
        identifier: 1, phase: .afterWaiting, start: 9_000_000_000, detectedAt: 9_240_000_000, sequence: 3)

    @Test func aStallNamingAnotherProcessIsTheSendersStall() {
        let forged = AgentMessage.stallBegan(pid: 900, tid: 900, onset: onset)
        #expect(gate.admit(forged, sender: 500, now: now) == .stallBegan(pid: 500, tid: 500, onset: onset))
    }

    @Test func aThreadTheSenderDoesNotHaveIsDropped() {
        #expect(gate.admit(.stallBegan(pid: 500, tid: 777, onset: onset), sender: 500, now: now) == nil)
        #expect(gate.admit(.stallSample(pid: 500, tid: 777, identifier: 1, index: 2), sender: 500, now: now) == nil)
        #expect(
            gate.admit(.stallSample(pid: 500, tid: 501, identifier: 1, index: 2), sender: 500, now: now)
                == .stallSample(pid: 500, tid: 501, identifier: 1, index: 2))
    }

    @Test func aSenderThatMayNotBeWatchedOrIsUnknownIsDropped() {
        #expect(gate.admit(.watching(pid: 900, tid: 900), sender: 900, now: now) == nil)
        #expect(gate.admit(.watching(pid: 500, tid: 500), sender: 0, now: now) == nil)
    }

    @Test func timesNoAgentCouldHaveReadAreDropped() {
        let future = StallOnset(identifier: 1, phase: .afterWaiting, start: .max, detectedAt: .max, sequence: 0)
        #expect(gate.admit(.stallBegan(pid: 500, tid: 500, onset: future), sender: 500, now: now) == nil)
        let backwards = StallOnset(
            identifier: 1, phase: .afterWaiting, start: 9_300_000_000, detectedAt: 9_000_000_000, sequence: 0)
        #expect(gate.admit(.stallBegan(pid: 500, tid: 500, onset: backwards), sender: 500, now: now) == nil)
        #expect(gate.admit(.stallEnded(pid: 500, identifier: 1, endedAt: .max), sender: 500, now: now) == nil)
        #expect(
            gate.admit(.frameRate(pid: 500, start: 2, end: 1, frames: 60, droppedNanoseconds: 0), sender: 500, now: now)
                == nil)
    }

    @Test func textFromTheAgentIsCut() {
        let long = String(repeating: "x", count: 100_000)
        guard case .refused(let pid, let reason)? = gate.admit(.refused(pid: 1, reason: long), sender: 500, now: now)
        else {
            Issue.record("a refusal is kept")
            return
        }
        #expect(pid == 500 && reason.count == MessageGate.longestText)
    }

    @Test func hostileCountsCannotOverflowTheBusyPeriods() {
        let histogram = LatencyHistogram(sparse: [[0, .max], [1, .max], [255, .max]])
        #expect(histogram.total == 3 * LatencyHistogram.largestCount)
        var merged = histogram
        merged.merge(histogram)
        #expect(merged.total == 6 * LatencyHistogram.largestCount)
    }

    @Test func aStallStartingAtTheEndOfTimeIsNotLate() {
        var report = StallReport(
            identifier: 1, pid: 500, tid: 500, processName: "w", phase: .afterWaiting, start: .max, end: nil,
            detectedAt: .max, thresholdNanoseconds: 80_000_000, count: 3, captureMethod: .ptrace, samples: [])
        #expect(report.watcherLateness == 0)
        report.thresholdNanoseconds = .max
        report.start = 0
        #expect(report.watcherLateness == 0)
    }

    @Test func theSummarySaysOneDroppedMessageInTheSingular() {
        #expect(Collector.droppedMessageWarning(0).isEmpty)
        #expect(
            Collector.droppedMessageWarning(1) == [
                "1 message on the agent's socket was dropped: it was not understood, or named a process, thread or"
                    + " time its sender could not vouch for"
            ])
        #expect(
            Collector.droppedMessageWarning(3).first?.hasPrefix(
                "3 messages on the agent's socket were dropped: they were") == true)
    }
}
