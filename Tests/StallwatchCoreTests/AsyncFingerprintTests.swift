// Culprit and fingerprint of stalls in async code: the blocking function and its nearest awaiting callers.
import Testing

@testable import StallwatchCore

/// A stalled task's stack: `blocking` in a native partial function of `helper`, awaited by `callers` (async frames),
/// run by the concurrency runtime on a dispatch worker.
func asyncStack(blocking: String, helper: String, callers: [String], base: UInt64 = 0x1000) -> [Frame] {
    func frame(_ index: Int, _ symbol: String, async: Bool = false) -> Frame {
        Frame(
            address: base + UInt64(index) * 16, image: "/app/Daemon", symbol: symbol, file: "/src/App.swift",
            line: 10 + index, async: async)
    }
    var frames = [
        Frame(address: 0x7f00_0000_0000, image: "/usr/lib/libc.so.6", symbol: "usleep"),
        frame(0, blocking),
        frame(1, "(2) suspend resume partial function for \(helper)"),
    ]
    frames += callers.enumerated().map {
        frame($0.offset + 2, "(1) await resume partial function for \($0.element)", async: true)
    }
    frames.append(
        Frame(
            address: 0x7f00_0000_2000, image: "/usr/lib/swift/linux/libswift_Concurrency.so",
            symbol: "swift::runJobInEstablishedExecutorContext(swift::Job*)"))
    return frames
}

@Suite struct AsyncFingerprintTests {
    @Test func oneHelperAwaitedFromTwoScreensIsTwoStalls() {
        let settings = report(samples: [
            asyncStack(blocking: "decode()", helper: "loadImage()", callers: ["SettingsScreen.appear()", "main()"])
        ])
        let profile = report(samples: [
            asyncStack(blocking: "decode()", helper: "loadImage()", callers: ["ProfileScreen.appear()", "main()"])
        ])
        #expect(settings.culprit?.symbol == "decode()")
        #expect(settings.fingerprint != profile.fingerprint)
    }

    @Test func theSuspensionPointTheHelperResumedFromDoesNotMatter() {
        var resumedElsewhere = asyncStack(blocking: "decode()", helper: "loadImage()", callers: ["Screen.appear()"])
        resumedElsewhere[2].symbol = "(5) await resume partial function for loadImage()"
        let one = report(samples: [
            asyncStack(blocking: "decode()", helper: "loadImage()", callers: ["Screen.appear()"])
        ])
        #expect(one.fingerprint == report(samples: [resumedElsewhere]).fingerprint)
    }

    @Test func aThunksPartialFunctionIsNotUserCode() {
        let thunk = Frame(
            address: 0x1000, image: "/app/Daemon",
            symbol: "(1) await resume partial function for thunk for @escaping @convention(thin) @async () -> ()",
            file: "<compiler-generated>")
        #expect(!UserCode.isUserWritten(thunk))
        let own = Frame(
            address: 0x1000, image: "/app/Daemon", symbol: "(1) await resume partial function for Screen.appear()",
            file: "/src/App.swift", line: 3)
        #expect(UserCode.isUserWritten(own))
    }
}
