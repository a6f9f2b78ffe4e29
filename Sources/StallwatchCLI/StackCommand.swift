// `stallwatch stack`: a one-shot dump of a running process's stacks, stopping each thread for a fraction of a
// millisecond.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchReport
import StallwatchSymbols
import StallwatchUnwind

/// Captures and prints the main thread's stack (or every thread's) of a running process.
///
/// The target is disturbed as little as possible: threads are stopped one at a time (`PTRACE_SEIZE` +
/// `PTRACE_INTERRUPT`, unwind, detach), each thread's state is read before it is stopped, and everything slow — reading
/// the image map, symbols and line tables — happens after the last thread was let go.
enum StackCommand {
    /// How long to wait for one thread to stop (a thread in uninterruptible sleep stops only when it leaves it).
    static let stopTimeout: Duration = .milliseconds(500)

    static func run(_ options: StackOptions, startedAt started: UInt64 = monotonicNow()) -> Int32 {
        let target: TargetProcess
        do {
            target = try Preflight.inspect(pid: options.pid)
        } catch {
            Terminal.writeError("stallwatch: error: \(error.message)\n")
            return error.exitCode
        }
        if let obstacle = target.ptraceObstacle {
            Terminal.writeError(
                "stallwatch: error: cannot capture the stacks of pid \(target.pid): \(obstacle.advice)\n")
            return ExitCode.permissionDenied
        }
        switch capture(target, allThreads: options.allThreads, startedAt: started) {
        case .failure(let error):
            Terminal.writeError("stallwatch: error: \(error.message)\n")
            return error.exitCode
        case .success(let stacks):
            let clock = WallClock.now()
            Terminal.writeOutput(StackReporter(json: options.format == .json, clock: clock).render(stacks))
            return ExitCode.success
        }
    }

    /// Stops, unwinds and releases each thread in turn, then reads the image map and names all the frames in one
    /// batch.
    ///
    /// Nothing else runs while a thread is stopped: work on other threads of ours would compete with the target for
    /// the CPU it needs the moment it is released.
    static func capture(_ target: TargetProcess, allThreads: Bool, startedAt started: UInt64) -> Result<
        ProcessStacks, RunError
    > {
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
                let stack = try sampler.capture(pid: pid, tid: tid, timeout: stopTimeout)
                var note: String?
                if stack.unwindError != 0 { note = "the unwinder stopped early (libunwind error \(stack.unwindError))" }
                captured.append((tid, name, state, stack, note))
            } catch {
                switch error {
                case .noSuchThread where tid != pid:
                    continue  // A thread that ended between the listing and its turn: nothing to show.
                case .noSuchThread, .processExited:
                    return .failure(
                        Preflight.noSuchProcess(
                            "pid \(pid) (\(target.name)) exited while its stack was being captured"))
                case .permissionDenied(let code):
                    return .failure(
                        RunError(
                            message: PtraceAdvice.explain(errno: code, pid: pid), exitCode: ExitCode.permissionDenied))
                case .failed(let reason):
                    captured.append((tid, name, state, nil, "no stack: \(reason)"))
                }
            }
        }
        // Read while the process lives; if it has exited meanwhile, the frames keep their addresses.
        // The toolchain's map only if its symbolicator is needed: naming follows at once.
        let images = ProcessImages.capture(pid: pid, readsToolchainMapNow: false)
        let symbolicator = CLISymbolicator.make(environment: ProcessInfo.processInfo.environment)
        let named = symbolicator.symbolicate(stacks: captured.map { $0.stack?.addresses ?? [] }, images: images)
        let threads = zip(captured, named).map { thread, frames in
            ThreadStack(
                tid: thread.tid, name: thread.name, state: thread.state, frames: frames,
                stoppedNanoseconds: thread.stack?.stoppedNanoseconds, error: thread.error)
        }
        return .success(
            ProcessStacks(
                pid: pid, processName: target.name, capturedAt: firstStop ?? monotonicNow(),
                threadCount: max(all.count, threads.count), threads: threads,
                elapsedNanoseconds: monotonicNow() - started, warnings: target.warnings))
    }
}
