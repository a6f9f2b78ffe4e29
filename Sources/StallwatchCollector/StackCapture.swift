// `stallwatch stack`'s engine: a one-shot capture of a running process's stacks, stopping each thread for a fraction
// of a millisecond.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchImages
import StallwatchSymbols
import StallwatchUnwind

/// Captures the main thread's stack (or every thread's) of a running process, and names the frames.
///
/// The target is disturbed as little as possible: threads are stopped one at a time (`PTRACE_SEIZE` +
/// `PTRACE_INTERRUPT`, unwind, detach), each thread's state is read before it is stopped, and everything slow — reading
/// the image map, symbols and line tables — happens after the last thread was let go.
public enum StackCapture {
    /// How long to wait for one thread to stop (a thread in uninterruptible sleep stops only when it leaves it).
    static let stopTimeout: Duration = .milliseconds(500)

    /// Checks the process, then captures.
    ///
    /// - Parameter started: when the command started, for the dump's elapsed time.
    /// - Parameter maxFrames: frames kept per stack (`--max-frames`).
    public static func capture(
        pid: Int32, allThreads: Bool, maxFrames: Int = WatchSettings().maxFrames, startedAt started: UInt64
    ) throws(StallwatchError) -> ProcessStacks {
        let target = try Preflight.inspect(pid: pid)
        if let obstacle = target.ptraceObstacle {
            throw StallwatchError(
                message: "cannot capture the stacks of pid \(target.pid): \(obstacle.advice)",
                exitCode: ExitCode.permissionDenied)
        }
        return try capture(target, allThreads: allThreads, maxFrames: maxFrames, startedAt: started).get()
    }

    /// How often a capture that lost its thread is tried again while the process lives.
    static let transientLossRetries = 3

    /// One capture, tried again when the thread seemed gone but the process is alive: a process that creates and
    /// joins threads in a loop can make a stop report its group's exit for a moment.
    static func captureRetryingTransientLoss(
        _ sampler: RemoteStackSampler, _ target: TargetProcess, tid: Int32,
        maxFrames: Int = RemoteStackSampler.defaultMaxFrames
    ) throws(RemoteCaptureError) -> RemoteStack {
        var attempt = 0
        while true {
            do {
                return try sampler.capture(pid: target.pid, tid: tid, maxFrames: maxFrames, timeout: stopTimeout)
            } catch {
                attempt += 1
                switch error {
                case .noSuchThread, .processExited:
                    guard attempt <= transientLossRetries, target.isAlive() else { throw error }
                    if tid != target.pid, ThreadInspector.name(pid: target.pid, tid: tid) == nil { throw error }
                default:
                    throw error
                }
            }
        }
    }

    /// Stops, unwinds and releases each thread in turn, then reads the image map and names all the frames in one
    /// batch.
    ///
    /// Nothing else runs while a thread is stopped: work on other threads of ours would compete with the target for
    /// the CPU it needs the moment it is released.
    static func capture(
        _ target: TargetProcess, allThreads: Bool, maxFrames: Int = WatchSettings().maxFrames, startedAt started: UInt64
    ) -> Result<ProcessStacks, StallwatchError> {
        let pid = target.pid
        let all = ThreadInspector.threads(pid: pid)
        let tids = allThreads ? all : [pid]
        let sampler = RemoteStackSampler(tables: .targetMemory)
        var captured: [(tid: Int32, name: String, state: ThreadState?, stack: RemoteStack?, error: String?)] = []
        var firstStop: UInt64?
        for tid in tids {
            let name = ThreadInspector.name(pid: pid, tid: tid) ?? ""
            let state = ThreadInspector.state(pid: pid, tid: tid)
            firstStop = firstStop ?? monotonicNow()
            do {
                let stack = try captureRetryingTransientLoss(sampler, target, tid: tid, maxFrames: maxFrames)
                captured.append((tid, name, state, stack, nil))
            } catch {
                switch error {
                case .noSuchThread where tid != pid:
                    continue  // A thread that ended between the listing and its turn: nothing to show.
                case .noSuchThread, .processExited:
                    guard target.isAlive() else {
                        return .failure(
                            Preflight.noSuchProcess(
                                "pid \(pid) (\(target.name)) exited while its stack was being captured"))
                    }
                    captured.append((tid, name, state, nil, "no stack: the thread could not be stopped (\(error))"))
                case .permissionDenied(let code):
                    return .failure(
                        StallwatchError(
                            message: PtraceDiagnosis.refusal(errno: code, pid: pid), exitCode: ExitCode.permissionDenied
                        ))
                case .failed(let reason):
                    captured.append((tid, name, state, nil, "no stack: \(reason)"))
                }
            }
        }
        // Read while the process lives; if it has exited meanwhile, the frames keep their addresses.
        // The toolchain's map only if its symbolicator is needed: naming follows at once.
        let images = ProcessImages.capture(pid: pid)
        let symbolicator = CollectorSymbolicator.make(environment: ProcessInfo.processInfo.environment)
        let named = symbolicator.symbolicate(stacks: captured.map { $0.stack?.addresses ?? [] }, images: images)
        let threads = zip(captured, named).map { thread, native in
            // Every thread runs again: the async callers are read from the heap now.
            let withCallers = thread.stack.map {
                AsyncCallers.splice(
                    into: native, hints: $0.asyncHints, pid: pid, images: images, symbolicator: symbolicator)
            }
            let frames = withCallers?.frames ?? native
            // A stack that ends before the thread's start says so, and why.
            let cutShort = thread.stack.flatMap { stack in
                StackEnd.cutShortNote(
                    frames: native, unwindError: stack.unwindError, walkLimit: stack.walkLimitReached)
            }
            let problems = [thread.error ?? cutShort, withCallers?.error].compactMap { $0 }
            let shown = InterpositionFrames.hidden(
                from: frames,
                truncation: thread.stack.flatMap { StackTruncation.of(frames: frames, stack: $0, maxFrames: maxFrames) }
            )
            return ThreadStack(
                tid: thread.tid, name: thread.name, state: thread.state, frames: shown.frames,
                stoppedNanoseconds: thread.stack?.stoppedNanoseconds,
                error: problems.isEmpty ? nil : problems.joined(separator: "; "), truncation: shown.truncation)
        }
        return .success(
            ProcessStacks(
                pid: pid, processName: target.name, capturedAt: firstStop ?? monotonicNow(),
                threadCount: max(all.count, threads.count), threads: threads,
                elapsedNanoseconds: monotonicNow() - started, warnings: target.warnings))
    }
}

extension StackTruncation {
    /// What `stack` left out, once its addresses are named as `frames`; nil when it is whole.
    static func of(frames: [Frame], stack: RemoteStack, maxFrames: Int) -> StackTruncation? {
        of(
            frames: frames, innerAddresses: stack.innerFrameCount, omitted: stack.omittedFrames, maxFrames: maxFrames,
            walkLimit: stack.walkLimitReached)
    }
}
