// `stallwatch report` by blocker: stall records with a `blocker` read back (the chain's end, its stack, a deadlock),
// stalled time summed by what the threads waited for, deadlock records kept; hostile nesting read without recursing
// off the stack.
import Foundation
import StallwatchCore
import StallwatchReport
import Testing

@testable import StallwatchAggregate

@Suite struct BlockerGroupTests {
    let reporter = JSONLinesReporter(clock: WallClock(offsetSeconds: 1_795_000_000), host: "h")

    func thread(_ tid: Int32, _ name: String, in function: String, blocker: Blocker? = nil) -> BlockingThread {
        BlockingThread(
            tid: tid, name: name, state: ThreadState(state: "S", syscall: "clock_nanosleep"),
            frames: [
                Frame(address: 0x7000, image: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "clock_nanosleep"),
                Frame(address: 0x2000, image: "/srv/app", symbol: function, file: "/src/app.swift", line: 3),
            ], blocker: blocker)
    }

    func stall(_ identifier: Int, milliseconds: UInt64, blocker: Blocker?) -> StallReport {
        var stall = StallReport(
            identifier: identifier, pid: 7, tid: 7, processName: "app", phase: .afterWaiting,
            start: UInt64(identifier) * 10_000_000_000,
            end: UInt64(identifier) * 10_000_000_000 + milliseconds * 1_000_000,
            detectedAt: 1, thresholdNanoseconds: 80_000_000, count: 3, captureMethod: .ptrace,
            samples: [
                Sample(frames: [Frame(address: 0x2100, image: "/srv/app", symbol: "View.refresh()")], capturedAt: 2)
            ])
        stall.blocker = blocker
        return stall
    }

    func collection(_ lines: [String]) -> StallCollection {
        var merger = StallMerger()
        NDJSONInput.read(bytes: Array(lines.joined().utf8), named: "run.ndjson", into: &merger)
        return merger.finish()
    }

    func lock(_ holder: BlockingThread, kind: LockKind = .mutex) -> Blocker {
        .lock(LockWait(kind: kind, address: 0x10, operation: "FUTEX_WAIT_PRIVATE", holder: holder))
    }

    @Test func stalledTimeIsSummedByWhoHeldTheLockAndWhere() throws {
        // Two stalls on db-writer's lock in Store.flush (one through a chain: main waits on a thread that waits on
        // db-writer), one on a child, one with no blocker.
        let writer = thread(9, "db-writer", in: "Store.flush()")
        let chained = thread(8, "cache", in: "Cache.fill()", blocker: lock(writer))
        let child = Blocker.child(
            ChildWait(
                target: .child(20), call: "wait4",
                children: [ChildProcess(pid: 20, name: "sleep", commandLine: "sleep 5", state: nil)]))
        let records = [
            reporter.render(stall(1, milliseconds: 500, blocker: lock(writer))),
            reporter.render(stall(2, milliseconds: 220, blocker: lock(chained))),
            reporter.render(stall(3, milliseconds: 180, blocker: child)),
            reporter.render(stall(4, milliseconds: 100, blocker: nil)),
        ]
        let stalls = collection(records)
        #expect(stalls.sources.allSatisfy { $0.issues.isEmpty }, "\(stalls.sources.map(\.issues))")
        let read = try #require(stalls.stalls[1].blocker)
        #expect(read.holderName == "db-writer" && read.holderTid == 9 && !read.deadlock, "the chain's end")
        let stack = try #require(read.holderStack)
        #expect(stalls.frames(ofStack: stack).map(\.displayName) == ["clock_nanosleep", "Store.flush()"])
        let groups = BlockerGroup.groups(of: stalls)
        #expect(
            groups.map(\.label) == ["locks held by thread `db-writer` in `Store.flush()`", "child process `sleep 5`"])
        #expect(groups.map(\.totalMs) == [720, 180])
        #expect(groups.map(\.stalls) == [[0, 1], [2]])
        #expect(abs(groups[0].share - 0.72) < 0.0001)
    }

    @Test func descriptorWaitsAreGroupedByObjectAndPeer() {
        let peer = PeerProcess(
            pid: 30, name: "writer", commandLine: "writer --slow", state: nil,
            descriptors: [PeerDescriptor(descriptor: 4, end: "write")])
        let pipe = Blocker.descriptor(
            DescriptorWait(call: "read", descriptor: 3, target: "pipe:[9]", object: .pipe(inode: 9), peers: [peer]))
        let lonely = Blocker.descriptor(
            DescriptorWait(call: "read", descriptor: 3, target: "/tmp/f", object: .file(path: "/tmp/f")))
        let stalls = collection([
            reporter.render(stall(1, milliseconds: 300, blocker: pipe)),
            reporter.render(stall(2, milliseconds: 200, blocker: pipe)),
            reporter.render(stall(3, milliseconds: 100, blocker: lonely)),
        ])
        let groups = BlockerGroup.groups(of: stalls)
        #expect(groups.map(\.label) == ["pipes to process `writer --slow`", "file I/O with no peer named"])
        #expect(groups.map(\.totalMs) == [500, 100])
    }

    @Test func deadlocksAreKeptAndTheirStallsGrouped() throws {
        let cycle = thread(
            8, "worker", in: "Worker.run()",
            blocker: lock(BlockingThread(tid: 7, name: "app", state: nil, closesCycle: true)))
        let deadlock = DeadlockReport(
            pid: 7, processName: "app", detectedAt: 5, stallIdentifier: 1,
            threads: [
                .init(tid: 7, name: "app", state: nil, frames: [], lockKind: .mutex, lockAddress: 0x10, holder: 8),
                .init(tid: 8, name: "worker", state: nil, frames: [], lockKind: .mutex, lockAddress: 0x20, holder: 7),
            ])
        let stalls = collection([
            reporter.render(deadlock), reporter.render(stall(1, milliseconds: 900, blocker: lock(cycle))),
        ])
        #expect(stalls.sources.allSatisfy { $0.issues.isEmpty }, "\(stalls.sources.map(\.issues))")
        #expect(stalls.deadlocks.map(\.threads) == [2])
        #expect(stalls.deadlocks.first?.summary == deadlock.summary)
        #expect(stalls.stalls.first?.blocker?.deadlock == true)
        #expect(BlockerGroup.groups(of: stalls).map(\.label) == ["a deadlock (threads waiting on each other's locks)"])
    }

    /// A hand-made record nesting holders a hundred thousand deep: read to the reader's depth, no crash.
    @Test func deepNestingIsCutNotRecursedInto() {
        let depth = 100_000
        let open = String(repeating: #"{"kind":"lock","holder":{"tid":5,"blocker":"#, count: depth)
        let close = String(repeating: "}}", count: depth)
        let line =
            #"{"event":"stall","schemaVersion":3,"id":1,"pid":7,"startedAt":"2026-11-29T20:33:10.287Z","fingerprint":"aaaaaaaaaaaaaaaa","blocker":"#
            + open + "null" + close + "}\n"
        let stalls = collection([line])
        #expect(stalls.stalls.count == 1)
        #expect(stalls.stalls.first?.blocker?.holderTid == 5)
    }
}
