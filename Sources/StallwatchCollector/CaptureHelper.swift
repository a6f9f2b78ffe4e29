// Library mode's capture helper: `stallwatch _capture-helper`, started by an app's `StallMonitor`, captures the app's
// stalled thread with ptrace as `stallwatch run` does and names its frames, so the app is never signalled.
import CStallwatchSystem
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchImages
import StallwatchSymbols
import StallwatchUnwind

/// Serves one app's capture requests on the socketpair it was started with, until the app goes away.
///
/// It dies with the app: the kernel kills it when the app's thread that started it exits (`PR_SET_PDEATHSIG`), and
/// it returns when its socket hangs up. It never writes to the app's terminal.
public enum CaptureHelper {
    /// Serves until the app closes its end; returns the exit status.
    public static func serve(socket: Int32, appPid: Int32) -> Int32 {
        _ = sw_set_parent_death_signal(SIGKILL)
        // The app may have died between starting us and the prctl: then no signal would ever come.
        guard getppid() == appPid else { return ExitCode.success }
        // Whatever else the app left open without close-on-exec is not ours to hold open.
        closeDescriptors(above: socket)
        var size = Int32(CaptureHelperRole.maximumAnswerSize)
        _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var session = CaptureSession(pid: appPid)
        send(.ready(pid: getpid(), version: StallwatchVersion.string), on: socket)
        var buffer = [UInt8](repeating: 0, count: WireFormat.maximumMessageSize)
        while true {
            let received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if received < 0, errno == EINTR { continue }
            guard received > 0 else { return ExitCode.success }
            guard let request = WireFormat.decode(HelperRequest.self, from: buffer.prefix(received)) else { continue }
            send(session.answer(request), on: socket)
        }
    }

    private static func send(_ answer: HelperAnswer, on socket: Int32) {
        let bytes = WireFormat.encode(answer)
        var tooLarge = bytes.count > CaptureHelperRole.maximumAnswerSize
        if !tooLarge {
            let sent = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The socket's send buffer is capped for unprivileged processes.
            tooLarge = sent < 0 && errno == EMSGSIZE
        }
        // Said, rather than leave the app waiting for its timeout.
        if tooLarge, case .captured(let request, _) = answer {
            send(
                .failed(request: request, reason: "the named stack was too large to send", threadGone: false),
                on: socket)
        }
    }

    private static func closeDescriptors(above socket: Int32) {
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 && descriptor != socket {
            close(descriptor)
        }
    }
}

/// One app's captures: the sampler's caches, the symbolicator and the app's image map, kept between stalls so a
/// warm capture stops the thread as briefly as under `stallwatch run`.
struct CaptureSession {
    let pid: Int32
    private let sampler = RemoteStackSampler()
    private let symbolicator = CollectorSymbolicator.make(environment: ProcessInfo.processInfo.environment)
    private var images: ProcessImages?

    init(pid: Int32) {
        self.pid = pid
    }

    mutating func answer(_ request: HelperRequest) -> HelperAnswer {
        switch request {
        case .capture(let number, let tid, let maxFrames):
            let frameLimit = min(
                max(maxFrames, WatchSettings.maxFramesRange.lowerBound), WatchSettings.maxFramesRange.upperBound)
            let capturedAt = monotonicNow()
            do {
                let stack = try sampler.capture(pid: pid, tid: tid, maxFrames: frameLimit)
                let images = self.images(covering: stack.addresses)
                // The app's thread runs again: its task's async callers are read from the app's heap now.
                let named = AsyncCallers.splice(
                    into: symbolicator.symbolicate(stack.addresses, images: images), hints: stack.asyncHints, pid: pid,
                    images: images, symbolicator: symbolicator)
                let frames = named.frames
                return .captured(
                    request: number,
                    stack: HelperStack(
                        frames: frames, capturedAt: capturedAt, stoppedNanoseconds: stack.stoppedNanoseconds,
                        truncation: StackTruncation.of(frames: frames, stack: stack, maxFrames: frameLimit),
                        unwindError: stack.unwindError, asyncCallersError: named.error))
            } catch {
                switch error {
                case .permissionDenied(let code):
                    return .refused(request: number, reason: PtraceDiagnosis.refusal(errno: code, pid: pid))
                case .noSuchThread, .processExited:
                    return .failed(
                        request: number, reason: "the thread was gone before its stack could be captured",
                        threadGone: true)
                case .failed(let reason):
                    return .failed(request: number, reason: "ptrace capture failed (\(reason))", threadGone: false)
                }
            }
        }
    }

    /// The app's image map, read again only when a stack leaves it (the app loaded a library).
    private mutating func images(covering addresses: [UInt64]) -> ProcessImages {
        if let images, addresses.allSatisfy({ $0 == 0 || images.image(containing: $0) != nil }) { return images }
        let fresh = ProcessImages.capture(pid: pid)
        images = fresh
        return fresh
    }
}
