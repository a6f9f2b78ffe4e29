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
            StackEnd.cutShortNote(frames: [frame("work"), frame(root)], unwindError: 0) == nil)
    }

    /// A stripped executable's `_start` is unnamed, but it is what calls `__libc_start_main`.
    @Test func anUnnamedCallerOfLibcStartIsTheStart() {
        let stripped = [frame("work"), frame("__libc_start_main", image: "/lib/libc.so.6"), frame(nil)]
        #expect(StackEnd.cutShortNote(frames: stripped, unwindError: 0) == nil)
        #expect(StackEnd.cutShortNote(frames: stripped, unwindError: -7) != nil, "an error is still said")
    }

    @Test func aStackWithoutRulesSaysSo() {
        let note = StackEnd.cutShortNote(frames: [frame("work")], unwindError: 0)
        #expect(
            note == "stack cut short after work in tool +0x11a0, before _start or clone: no unwind rule covers it"
                + " (neither .eh_frame nor .debug_frame: built without unwind tables, or stripped)")
    }

    @Test func anUnwinderErrorAndTheWalkLimitAreNamed() {
        let error = StackEnd.cutShortNote(frames: [frame("work")], unwindError: -7)
        #expect(error?.hasSuffix("libunwind stopped with bad frame (-7)") == true)
        let deep = StackEnd.cutShortNote(frames: [frame("recurse")], unwindError: 0, walkLimit: 16384)
        #expect(deep?.hasSuffix("it is deeper than the 16384 frames a capture walks") == true)
        #expect(StackEnd.cutShortNote(frames: [], unwindError: 0) == nil)
    }
}

@Suite struct StackTruncationTests {
    private func frame(_ symbol: String, inlined: Bool = false) -> Frame {
        Frame(address: 0x1000, image: "/app/tool", offset: 0x1000, symbol: symbol, inlined: inlined)
    }

    /// Inlined frames share their caller's address and come before it: the boundary after two addresses falls after
    /// the second address's own (not inlined) frame.
    @Test func theBoundaryCountsAddressesNotFrames() {
        let frames = [
            frame("leaf"), frame("helper", inlined: true), frame("caller"), frame("outer"), frame("_start"),
        ]
        #expect(StackTruncation.frameIndex(afterAddresses: 1, in: frames) == 1)
        #expect(StackTruncation.frameIndex(afterAddresses: 2, in: frames) == 3)
        #expect(StackTruncation.frameIndex(afterAddresses: 9, in: frames) == frames.count)
        let truncation = StackTruncation.of(frames: frames, innerAddresses: 2, omitted: 500, maxFrames: 16)
        #expect(truncation?.resumesAt == 3)
        #expect(
            truncation?.reason
                == "the stack is deeper than the 16 frames kept (--max-frames): 500 frames between the innermost and"
                + " the outermost left out")
    }

    @Test func aWholeStackHasNoTruncation() {
        #expect(StackTruncation.of(frames: [frame("a")], innerAddresses: 1, omitted: 0, maxFrames: 16) == nil)
        let uncounted = StackTruncation(omittedFrames: nil, resumesAt: 1, maxFrames: 512)
        #expect(uncounted.reason.hasSuffix("the frames beyond them are left out"))
        let limited = StackTruncation(omittedFrames: 16_320, resumesAt: 48, maxFrames: 64, walkLimit: 16384)
        #expect(limited.reason.contains("the walk stopped short of the thread's start"))
    }
}
