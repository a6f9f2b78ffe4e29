// Telling the program's frames from the system's decides which frame a report calls the culprit.
import Testing

@testable import StallwatchCore

@Suite struct ImageClassifierTests {
    @Test(arguments: [
        "/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/swift/usr/lib/swift/linux/libFoundation.so",
        "/opt/swift/usr/lib/swift/linux/libswiftCore.so", "/opt/swift/usr/lib/swift/linux/libdispatch.so",
        "[vdso]", "/lib64/ld-linux-x86-64.so.2",
    ])
    func systemImages(path: String) {
        #expect(ImageClassifier.isSystemImage(path))
    }

    @Test func programImagesAreNotSystem() {
        #expect(!ImageClassifier.isSystemImage("/home/me/MyDaemon"))
        #expect(!ImageClassifier.isSystemImage("/home/me/libMyKit.so"))
    }

    @Test func culpritIsTheInnermostApplicationFrame() {
        let frames = [
            Frame(address: 1, image: "/usr/lib/x86_64-linux-gnu/libc.so.6", symbol: "__nanosleep"),
            Frame(address: 2, image: "/app/Daemon", symbol: "thunk for @escaping @callee_guaranteed () -> ()"),
            Frame(address: 3, image: "/app/Daemon", symbol: "DiskCache.waitForSlowDisk()"),
            Frame(address: 4, image: "/app/Daemon", symbol: "main"),
        ]
        let report = StallReport(
            identifier: 1, pid: 1, tid: 1, processName: "Daemon", phase: .afterWaiting, start: 0, end: 10,
            detectedAt: 5, thresholdNanoseconds: 1, count: 3, captureMethod: .ptrace,
            samples: [Sample(frames: frames, capturedAt: 5)])
        #expect(report.culprit?.symbol == "DiskCache.waitForSlowDisk()")
        #expect(report.duration == 10)
    }
}
