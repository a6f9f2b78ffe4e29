// A stack that ends before the thread's start is cut short, and the note says where and why.
import Testing

@testable import StallwatchCore

@Suite struct StackEndTests {
    private func frame(_ symbol: String?, image: String? = "/app/tool") -> Frame {
        Frame(address: 0x4011a0, image: image, offset: 0x11a0, symbol: symbol)
    }

    @Test(arguments: ["_start", "__clone3", "clone"])
    func aWholeStackHasNoNote(root: String) {
        #expect(
            StackEnd.cutShortNote(frames: [frame("work"), frame(root)], unwindError: 0, maxFrames: 256, captured: 2)
                == nil)
    }

    @Test func aStackWithoutRulesSaysSo() {
        let note = StackEnd.cutShortNote(frames: [frame("work")], unwindError: 0, maxFrames: 256, captured: 1)
        #expect(
            note == "stack cut short after work in tool +0x11a0, before _start or clone: no unwind rule covers it"
                + " (neither .eh_frame nor .debug_frame: built without unwind tables, or stripped)")
    }

    @Test func anUnwinderErrorAndTheFrameLimitAreNamed() {
        let error = StackEnd.cutShortNote(frames: [frame("work")], unwindError: -7, maxFrames: 256, captured: 1)
        #expect(error?.hasSuffix("libunwind stopped with bad frame (-7)") == true)
        let deep = StackEnd.cutShortNote(frames: [frame("recurse")], unwindError: 0, maxFrames: 4, captured: 4)
        #expect(deep?.hasSuffix("it is deeper than the 4 frames captured") == true)
        #expect(StackEnd.cutShortNote(frames: [], unwindError: 0, maxFrames: 4, captured: 0) == nil)
    }
}
