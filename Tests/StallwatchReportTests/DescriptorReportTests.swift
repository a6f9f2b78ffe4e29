// A stalled thread blocked on a descriptor, in every format: the JSON `blocker` (object, addresses, peers), the text
// block, the JUnit failure.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

@testable import StallwatchReport

/// `sampleStall()` blocked reading a pipe whose write end a sleeping child holds.
func pipeStall() -> StallReport {
    var stall = sampleStall()
    let sleeping = ThreadState(state: "S", syscall: "clock_nanosleep")
    let writer = PeerProcess(
        pid: 4321, name: "writer", commandLine: "writer --slow", state: sleeping,
        descriptors: [PeerDescriptor(descriptor: 4, end: "write")],
        threads: [PeerThread(tid: 4321, name: "writer", state: sleeping)])
    stall.blocker = .descriptor(
        DescriptorWait(
            call: "read", descriptor: 3, target: "pipe:[12345]", object: .pipe(inode: 12345), peers: [writer]))
    stall.blockerSearchNanoseconds = 12_500_000
    return stall
}

/// A TCP connection on loopback whose peer is not found.
let tcpSocket = InetSocket(
    transport: "tcp", local: SocketAddress(host: "127.0.0.1", port: 40012, bytes: [127, 0, 0, 1]),
    remote: SocketAddress(host: "127.0.0.1", port: 8080, bytes: [127, 0, 0, 1]), state: "ESTABLISHED", inode: 77)

@Suite struct DescriptorReportTests {
    @Test func theJSONBlockerNamesThePipeAndItsOtherEnd() throws {
        let record = try JSONLines.decode(
            StallRecord.self, from: JSONLinesReporter(clock: fixedClock).render(pipeStall()))
        let blocker = try #require(record.blocker.value)
        #expect(blocker.kind == "descriptor" && blocker.call == "read" && blocker.fd == 3 && blocker.object == "pipe")
        #expect(blocker.target?.value == "pipe:[12345]" && blocker.inode?.value == 12345)
        #expect(blocker.searchMs == .value(12.5))
        let peer = try #require(blocker.peers?.first)
        #expect(peer.pid == 4321 && peer.process == "writer" && peer.commandLine == "writer --slow")
        #expect(peer.fds.map(\.fd) == [4] && peer.fds.map(\.end) == ["write"])
        #expect(peer.doing == "sleeping in clock_nanosleep" && peer.threads.map(\.tid) == [4321])
        #expect(
            blocker.summary
                == "blocked reading pipe:[12345] (fd 3); the other end is held by pid 4321 (writer), sleeping in"
                + " clock_nanosleep")
    }

    @Test func aSocketGivesItsAddressesAndANoteWithoutPeer() throws {
        var stall = sampleStall()
        stall.blocker = .descriptor(
            DescriptorWait(
                call: "recvfrom", descriptor: 5, target: "socket:[77]", object: .inetSocket(tcpSocket),
                note: "no process holding its peer was found"))
        let record = try JSONLines.decode(StallRecord.self, from: JSONLinesReporter(clock: fixedClock).render(stall))
        let blocker = try #require(record.blocker.value)
        #expect(blocker.object == "tcp")
        let socket = try #require(blocker.socket?.value)
        #expect(socket.local == "127.0.0.1:40012" && socket.remote == "127.0.0.1:8080" && socket.state == "ESTABLISHED")
        #expect(blocker.peers == [])
        #expect(
            blocker.summary
                == "blocked reading TCP 127.0.0.1:40012 -> 127.0.0.1:8080 (ESTABLISHED) (fd 5); no process holding its"
                + " peer was found")
    }

    @Test func textListsEachPeerItsEndCommandAndThreads() {
        var text = TextReporter(clock: fixedClock, colored: false)
        let block = text.render(pipeStall())
        #expect(
            block.contains(
                "\n  blocked reading pipe:[12345] (fd 3, read); the other end is held by:\n"
                    + "    pid 4321 (writer) fd 4 (write end), sleeping in clock_nanosleep\n"
                    + "      command: writer --slow\n"
                    + "      thread writer (tid 4321): sleeping in clock_nanosleep\n"), "\(block)")
    }

    @Test func junitNamesTheOtherEnd() throws {
        let stalls = [pipeStall()]
        let summary = RunSummary(
            stalls: stalls, runNanoseconds: 4_000_000_000, watchedPids: [4242], exitStatus: 0, warnings: [])
        let report = JUnitReport(
            stalls: stalls, summary: summary, budget: StallBudget(failOnStall: true), baseline: [],
            startOfRun: 1_000_000_000, endOfRun: 5_000_000_000, command: "./MyDaemon", clock: fixedClock)
        let xml = report.render()
        #expect(try schemaProblem(xml) == nil)
        #expect(
            xml.contains("the other end is held by pid 4321 (writer), sleeping in clock_nanosleep\" type=\"stall\">"))
    }
}
