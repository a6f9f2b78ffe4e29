// Library mode's protocol with its capture helper: answers survive the wire, and the helper is looked for in order.
import StallwatchCore
import Testing

@Suite struct HelperProtocolTests {
    @Test func aNamedStackRoundTrips() throws {
        let frames = [
            Frame(
                address: 0x5555_0000_1234, image: "/app/App", offset: 0x1234, symbol: "App.load()",
                file: "/src/A.swift",
                line: 12, column: 5, inlined: true),
            Frame(address: 0x7f00_0000_0010, image: "/usr/lib/libc.so.6", offset: 0x10, symbol: "nanosleep"),
        ]
        let answer = HelperAnswer.captured(
            request: 7,
            stack: HelperStack(
                frames: frames, capturedAt: 123_456_789, stoppedNanoseconds: 41_000,
                truncation: StackTruncation(omittedFrames: 3, resumesAt: 1, maxFrames: 16), unwindError: -2))
        let decoded = WireFormat.decode(HelperAnswer.self, from: WireFormat.encode(answer))
        #expect(decoded == answer)
        let request = HelperRequest.capture(request: 7, tid: 99, maxFrames: 256)
        #expect(WireFormat.decode(HelperRequest.self, from: WireFormat.encode(request)) == request)
    }

    @Test func theConfiguredPathAloneIsTried() {
        let places = CaptureHelperRole.candidates(
            configured: "/opt/helper", environment: [CaptureHelperRole.environmentVariable: "/env/stallwatch"],
            agentLibrary: "/app/lib/libStallwatchAgent.so", executable: "/app/bin/App")
        #expect(places == ["/opt/helper"])
    }

    @Test func theEnvironmentComesBeforeThePlacesSearched() {
        let places = CaptureHelperRole.candidates(
            configured: nil, environment: [CaptureHelperRole.environmentVariable: "/env/stallwatch"],
            agentLibrary: "/app/lib/libStallwatchAgent.so", executable: "/app/bin/App")
        #expect(places == ["/env/stallwatch"])
    }

    @Test func besideTheAgentLibraryThenBesideTheExecutable() {
        let apart = CaptureHelperRole.candidates(
            configured: nil, environment: [:], agentLibrary: "/app/lib/libStallwatchAgent.so",
            executable: "/app/bin/App")
        #expect(apart == ["/app/lib/stallwatch", "/app/bin/stallwatch"])
        // SwiftPM puts the library beside the executable: one place, once.
        let together = CaptureHelperRole.candidates(
            configured: nil, environment: [CaptureHelperRole.environmentVariable: ""],
            agentLibrary: "/b/debug/libStallwatchAgent.so", executable: "/b/debug/App")
        #expect(together == ["/b/debug/stallwatch"])
    }
}
