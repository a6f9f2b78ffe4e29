// The agent's pass-through frames are left out of stacks; its own work, and everything else, is kept.

import StallwatchCore
import Testing

struct InterpositionFramesTests {
    private static let agent = "/opt/stallwatch/libStallwatchAgent.so"
    private static let foundation = "/usr/lib/swift/linux/libFoundation.so"
    private static let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"

    private static func frame(_ symbol: String, _ image: String) -> Frame {
        Frame(address: UInt64(symbol.utf8.count) &* 0x1000, image: image, symbol: symbol)
    }

    /// A stalled callout under `stallwatch run`: the program's timer, CF's run, the agent's stand-in, CF's entry.
    private static let runLoopStack = [
        frame("nanosleep", libc), frame("App.slowTimer()", "/app/demo"),
        frame("__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__", foundation),
        frame("__CFRunLoopRun", foundation), frame("CFRunLoopRunSpecific", foundation),
        frame("hand_on", agent), frame("publishing_run", agent), frame("CFRunLoopRunSpecific", agent),
        frame("CFRunLoopRun", foundation), frame("main", "/app/demo"), frame("__libc_start_main", libc),
    ]

    @Test func passThroughFramesAreLeftOut() {
        let shown = InterpositionFrames.hidden(from: Self.runLoopStack).compactMap(\.symbol)
        #expect(
            shown == [
                "nanosleep", "App.slowTimer()", "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__",
                "__CFRunLoopRun", "CFRunLoopRunSpecific", "CFRunLoopRun", "main", "__libc_start_main",
            ])
    }

    @Test func aStallInTheAgentsOwnWorkIsShown() {
        let inAgent = [
            Self.frame("futex_wait", Self.libc), Self.frame("sw_publish_slowly", Self.agent),
            Self.frame("CFRunLoopRunSpecific", Self.agent), Self.frame("main", "/app/demo"),
        ]
        #expect(InterpositionFrames.hidden(from: inAgent) == inAgent)
    }

    @Test func stacksWithoutTheAgentAreUntouched() {
        let plain = Self.runLoopStack.filter { $0.image != Self.agent }
        #expect(InterpositionFrames.hidden(from: plain) == plain)
        #expect(InterpositionFrames.isAgentImage("libStallwatchAgent.so"))
        #expect(!InterpositionFrames.isAgentImage(nil))
    }

    @Test func aTruncatedStacksOutermostIndexFollows() {
        // Frames 0..<7 are the innermost kept, 7... the outermost.
        let truncation = StackTruncation(omittedFrames: 40, resumesAt: 7, maxFrames: 64)
        let shown = InterpositionFrames.hidden(from: Self.runLoopStack, truncation: truncation)
        // Two agent frames lay before index 7 and one at it: the outermost part now starts two frames earlier.
        #expect(shown.truncation?.resumesAt == 5)
        #expect(shown.frames[5].symbol == "CFRunLoopRun")
        let none = StackTruncation(omittedFrames: nil, resumesAt: Self.runLoopStack.count, maxFrames: 11)
        #expect(
            InterpositionFrames.hidden(from: Self.runLoopStack, truncation: none).truncation?.resumesAt
                == Self.runLoopStack.count - 3)
    }
}
