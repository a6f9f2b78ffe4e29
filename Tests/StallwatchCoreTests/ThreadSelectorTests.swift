// `--thread` selectors, thread roles, the event-loop evidence rule, and stalls grouped and added up per thread.
import Testing

@testable import StallwatchCore

@Suite struct ThreadSelectorTests {
    @Test func parsesEachKind() throws {
        #expect(try ThreadSelector(parsing: "main") == .main)
        #expect(try ThreadSelector(parsing: "all") == .all)
        #expect(try ThreadSelector(parsing: "4250") == .tid(4250))
        #expect(try ThreadSelector(parsing: "NIO-ELT-*") == .name("NIO-ELT-*"))
        #expect(try ThreadSelector(parsing: "worker") == .name("worker"))
    }

    @Test(arguments: ["", "0", "99999999999", "a-name-far-too-long-for-comm"])
    func refusesWhatCanNeverMatch(text: String) {
        #expect(throws: ThreadSelector.Invalid.self) { try ThreadSelector(parsing: text) }
    }

    @Test func matchesByRoleNameAndTid() {
        #expect(ThreadSelector.main.matches(tid: 42, name: "Daemon", pid: 42))
        #expect(!ThreadSelector.main.matches(tid: 43, name: "Daemon", pid: 42))
        #expect(ThreadSelector.all.matches(tid: 43, name: nil, pid: 42))
        #expect(ThreadSelector.tid(43).matches(tid: 43, name: "x", pid: 42))
        #expect(!ThreadSelector.tid(43).matches(tid: 44, name: "x", pid: 42))
        let nio = ThreadSelector.name("NIO-ELT-*")
        #expect(nio.matches(tid: 45, name: "NIO-ELT-0-#3", pid: 42))
        #expect(!nio.matches(tid: 45, name: "Daemon", pid: 42))
        #expect(!nio.matches(tid: 45, name: nil, pid: 42), "a thread whose name cannot be read matches no glob")
        #expect(ThreadSelector.name("io-[0-9]").matches(tid: 45, name: "io-7", pid: 42))
        #expect(ThreadSelector.name("io-?").matches(tid: 45, name: "io-x", pid: 42))
    }

    @Test func travelsThroughTheEnvironmentIntact() {
        let selectors: [ThreadSelector] = [.main, .name("a,b *"), .tid(9)]
        #expect([ThreadSelector](encoded: selectors.encoded) == selectors)
        #expect([ThreadSelector](encoded: "") == [.main])
        let settings = WatchSettings(environment: [AgentEnvironment.threads: selectors.encoded])
        #expect(settings.threads == selectors)
        #expect(WatchSettings(environment: [:]).threads == [.main])
    }

    @Test func rolesNormaliseEveryNumber() {
        #expect(ThreadRole.of(name: "NIO-ELT-0-#3") == ThreadRole.of(name: "NIO-ELT-0-#1"))
        #expect(ThreadRole.of(name: "NIO-ELT-0-#12") == "NIO-ELT-#-##")
        #expect(ThreadRole.of(name: "worker") != ThreadRole.of(name: "NIO-ELT-0-#1"))
    }
}

@Suite struct EventLoopEvidenceTests {
    @Test func provenByItsFirstEventLoopWaitOnly() {
        var evidence = EventLoopEvidence()
        let proofs = [
            ThreadState(state: "S", syscall: "futex"), ThreadState(state: "R"), ThreadState(state: "T"),
        ].map { evidence.note($0) }
        #expect(proofs == [false, false, false], "a futex, running, stopped (at rest, but no proof)")
        #expect(!evidence.isEventLoop)
        #expect(evidence.notWatchedReason.contains("running"))
        let first = evidence.note(ThreadState(state: "S", syscall: "epoll_wait"))
        let second = evidence.note(ThreadState(state: "S", syscall: "epoll_wait"))
        #expect(first && !second, "proven once")
        #expect(evidence.isEventLoop)
    }
}

@Suite struct ThreadGroupingTests {
    func loopStall(tid: Int32, name: String?, symbol: String = "Handler.channelRead()") -> StallReport {
        var stall = report(samples: [stack([symbol]), stack([symbol])])
        stall.tid = tid
        stall.threadName = name
        return stall
    }

    @Test func theSameHandlerOnTwoLoopsOfAPoolSharesAFingerprint() {
        let one = loopStall(tid: 10, name: "NIO-ELT-0-#1")
        let three = loopStall(tid: 12, name: "NIO-ELT-0-#3")
        #expect(one.fingerprint == three.fingerprint)
        #expect(one.fingerprint != loopStall(tid: 13, name: "worker").fingerprint, "another role")
        #expect(one.fingerprint != loopStall(tid: 7, name: "Daemon").fingerprint, "the main thread is its own role")
    }

    @Test func mainThreadFingerprintsAreUnchangedByThreadNames() {
        let plain = report(samples: [stack(["Handler.channelRead()"]), stack(["Handler.channelRead()"])])
        #expect(loopStall(tid: 7, name: "Daemon").fingerprint == plain.fingerprint)
        #expect(plain.threadRole == nil)
    }

    @Test func placeNamesTheThreadOffTheMainOne() {
        #expect(loopStall(tid: 7, name: "Daemon").place == "Daemon (pid 7)")
        #expect(loopStall(tid: 10, name: "NIO-ELT-0-#1").place == "Daemon (pid 7), thread NIO-ELT-0-#1 (tid 10)")
    }

    @Test func totalsPerThreadOnlyWhenSomeStallIsOffTheMainThread() throws {
        let main = report(samples: [])
        #expect(ThreadTotal.of([main, main]).isEmpty)
        let totals = ThreadTotal.of([
            main, loopStall(tid: 10, name: "NIO-ELT-0-#1"), loopStall(tid: 10, name: "NIO-ELT-0-#1"),
        ])
        #expect(totals.map(\.name) == ["NIO-ELT-0-#1", "main"])
        #expect(totals.map(\.stallCount) == [2, 1])
        // Unwrapped first: the expectation macro's capture of a `UInt64?` reads past it under AddressSanitizer.
        let stalled = try #require(totals.first?.stalledNanoseconds)
        #expect(stalled == 2 * 700_000_000)
        let summary = RunSummary(
            stalls: [main, loopStall(tid: 10, name: "x")], runNanoseconds: 1, watchedPids: [7],
            exitStatus: 0, warnings: [])
        #expect(summary.threads.count == 2)
    }
}
