// Whether a process's environment still preloads the agent.
import Testing

@testable import StallwatchCore

@Suite struct PreloadCheckTests {
    private let agent = "/opt/stallwatch/lib/libStallwatchAgent.so"

    private func environ(_ entries: String...) -> [UInt8] {
        entries.flatMap { Array($0.utf8) + [0] }
    }

    @Test func theAgentAmongPreloadedLibrariesIsFoundBySpaceOrColon() {
        let listed = environ("HOME=/root", "LD_PRELOAD=\(agent):/usr/lib/x.so", "PATH=/bin")
        #expect(PreloadCheck.verdict(environ: listed, agentLibrary: agent) == .agentPreloaded)
        let spaced = environ("LD_PRELOAD=/usr/lib/x.so \(agent)")
        #expect(PreloadCheck.verdict(environ: spaced, agentLibrary: agent) == .agentPreloaded)
        // Another path to the same library name (a copy, a symlinked directory) is still the agent.
        let elsewhere = environ("LD_PRELOAD=/tmp/build/libStallwatchAgent.so")
        #expect(PreloadCheck.verdict(environ: elsewhere, agentLibrary: agent) == .agentPreloaded)
    }

    @Test func aReplacedOrMissingPreloadIsSaid() {
        #expect(
            PreloadCheck.verdict(environ: environ("A=1", "LD_PRELOAD=/tmp/x.so"), agentLibrary: agent)
                == .replaced("/tmp/x.so"))
        #expect(PreloadCheck.verdict(environ: environ("A=1"), agentLibrary: agent) == .unset)
        #expect(PreloadCheck.verdict(environ: [], agentLibrary: agent) == nil, "an empty read says nothing")
        // The last definition is the one ld.so sees.
        let twice = environ("LD_PRELOAD=\(agent)", "LD_PRELOAD=/tmp/x.so")
        #expect(PreloadCheck.verdict(environ: twice, agentLibrary: agent) == .replaced("/tmp/x.so"))
    }
}
