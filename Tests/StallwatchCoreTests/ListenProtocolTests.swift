// Where a listening agent's socket lives, and the attach request's wire form.
import StallwatchCore
import Testing

@Suite struct ListenSocketTests {
    @Test func runtimeDirectoryWhenTheProcessHasOne() {
        #expect(ListenSocket.directory(runtimeDirectory: "/run/user/1000", uid: 1000) == "/run/user/1000/stallwatch")
        #expect(ListenSocket.directory(runtimeDirectory: "/run/user/1000/", uid: 1000) == "/run/user/1000/stallwatch")
    }

    @Test func perUserTemporaryDirectoryOtherwise() {
        #expect(ListenSocket.directory(runtimeDirectory: nil, uid: 1000) == "/tmp/stallwatch-1000")
        #expect(ListenSocket.directory(runtimeDirectory: "relative", uid: 0) == "/tmp/stallwatch-0")
        #expect(ListenSocket.fileName(pid: 4242) == "4242.sock")
    }

    @Test func attachRequestRoundTrips() {
        let request = AttachRequest(
            thresholdNanoseconds: 80_000_000, count: 3, maxSamples: 10, collectorVersion: StallwatchVersion.string)
        #expect(WireFormat.decode(AttachRequest.self, from: WireFormat.encode(request)) == request)
        #expect(
            WireFormat.decode(AttachRequest.self, from: WireFormat.encode(AgentMessage.watching(pid: 1, tid: 1))) == nil
        )
        #expect(AgentEnvironment.listen == "STALLWATCH_LISTEN")
    }
}
