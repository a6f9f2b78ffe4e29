// The /proc side of `--thread` on a real process: a loop thread that appears after the watch began is picked up by
// name, proven a loop by its wait, found stalled while it spins, and its stall ends when it exits.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchCollector

@Suite(.serialized) struct ThreadWatchSetTests {
    /// Main thread: sleeps 0.3 s, starts `tws-loop`, waits for it, sleeps 1 s. The loop: 0.5 s in epoll_wait, 0.7 s
    /// spinning, then it exits.
    static let program = """
        #define _GNU_SOURCE
        #include <pthread.h>
        #include <sys/epoll.h>
        #include <time.h>
        #include <unistd.h>
        static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
        static void *loop(void *unused) {
            pthread_setname_np(pthread_self(), "tws-loop");
            int epoll = epoll_create1(0);
            struct epoll_event event;
            epoll_wait(epoll, &event, 1, 500);
            double end = now() + 0.7;
            volatile unsigned long spins = 0;
            while (now() < end) spins++;
            return 0;
        }
        int main(void) {
            usleep(300000);
            pthread_t thread; pthread_create(&thread, 0, loop, 0); pthread_join(thread, 0);
            sleep(1);
            return 0;
        }
        """

    @Test func aLateThreadIsPickedUpProvenStalledAndEndedAtItsExit() throws {
        let binary = try #require(CHelper.build(Self.program), "cc could not build the test program")
        let target = try StallwatchTestSupport.TargetProcess([binary])
        defer { target.stop() }
        let threshold: UInt64 = 40_000_000
        let start = monotonicNow()
        let watch = ThreadWatchSet(
            pid: target.pid, selectors: [.name("tws-*"), .name("nothing-*")],
            settings: WatchSettings(thresholdNanoseconds: threshold, count: 3, maxSamples: 10), now: start)
        var messages: [AgentMessage] = []
        while monotonicNow() < start + 2_300_000_000 {
            let now = monotonicNow()
            if now >= watch.nextWake { messages += watch.step(now: now) }
            usleep(5000)
        }
        let loopTid = try #require(watch.names.first { $0.value == "tws-loop" }?.key, "the late thread was seen")
        #expect(loopTid != target.pid)
        #expect(messages.contains(.watching(pid: target.pid, tid: loopTid)), "proven a loop by its epoll_wait")
        let began = messages.compactMap { message -> (Int32, StallOnset)? in
            if case .stallBegan(_, let tid, let onset) = message { return (tid, onset) }
            return nil
        }
        #expect(began.count == 1 && began.first?.0 == loopTid, "one stall, the loop's: \(messages)")
        let ended = messages.compactMap { message -> UInt64? in
            if case .stallEnded(_, let identifier, let endedAt) = message, identifier == began.first?.1.identifier {
                return endedAt
            }
            return nil
        }
        let end = try #require(ended.first, "ended when the thread exited: \(messages)")
        let length = Double(end - (began.first?.1.start ?? end)) / 1e6
        // 0.7 s of spinning, sampled every 40 ms: generous for a shared machine.
        #expect(length > 500 && length < 1000, "\(length) ms")
        #expect(watch.unmatchedSelectors == [ThreadSelector.name("nothing-*")])
        #expect(!messages.contains { if case .watching(_, let tid, _) = $0 { tid == target.pid } else { false } })
    }

    /// Four threads at a time, each 0.15 s asleep (no event-loop wait), for 2.5 s: about 60 short-lived threads.
    static let churn = """
        #define _GNU_SOURCE
        #include <pthread.h>
        #include <unistd.h>
        static void *brief(void *unused) {
            pthread_setname_np(pthread_self(), "churn");
            usleep(150000);
            return 0;
        }
        int main(void) {
            for (int round = 0; round < 16; round++) {
                pthread_t threads[4];
                for (int i = 0; i < 4; i++) pthread_create(&threads[i], 0, brief, 0);
                for (int i = 0; i < 4; i++) pthread_join(threads[i], 0);
            }
            sleep(5);
            return 0;
        }
        """

    /// Short-lived threads that exit before they could be watched are counted in one sentence, not named one each.
    @Test func threadsThatExitUnwatchedAreCountedNotListed() throws {
        let binary = try #require(CHelper.build(Self.churn), "cc could not build the test program")
        let target = try StallwatchTestSupport.TargetProcess([binary])
        defer { target.stop() }
        let start = monotonicNow()
        let watch = ThreadWatchSet(
            pid: target.pid, selectors: [.all],
            settings: WatchSettings(thresholdNanoseconds: 20_000_000, count: 3, maxSamples: 10), now: start)
        while monotonicNow() < start + 3_000_000_000 {
            let now = monotonicNow()
            if now >= watch.nextWake { _ = watch.step(now: now) }
            usleep(5000)
        }
        // A scan every 0.25 s sees one round of four in most of the ten rounds it meets.
        try #require(
            watch.departedCount > ThreadWatchSet.departedNamed, "threads seen and gone: \(watch.departedCount)")
        let notes = watch.unwatchedNotes
        // A new thread bears its creator's name until it names itself: a few may be counted under the program's.
        #expect(notes.filter { $0.contains("churn") }.count == 1, "\(notes)")
        let counted = try #require(notes.first, "\(notes)")
        #expect(
            counted.hasPrefix(
                "\(watch.departedCount) threads of pid \(target.pid) exited before they could be watched (picked by"
                    + " --thread, never seen waiting in an event loop while they ran; named churn ("), "\(notes)")
    }
}
