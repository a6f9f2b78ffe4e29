// Who the stalled thread waits for, found in the same capture: the lock's holder (its state and stack, and what it
// waits for in turn, until the chain ends or comes back on itself: a deadlock), the child process, or the descriptor
// and who is at its other end (StallCapturer+Descriptor.swift).
import StallwatchCore
import StallwatchImages
import StallwatchUnwind

extension StallCapturer {
    /// Threads followed at most from the stalled thread: each costs a capture (a tenth of a millisecond stopped,
    /// warm), and chains of locks longer than this are rare.
    static let longestChain = 6
    /// No further holder is captured once a search has taken this long: a holder that is slow to stop (in an
    /// uninterruptible wait) must not hold the collector's loop for a capture timeout per link.
    static let searchBudget: UInt64 = 25_000_000

    /// One search: the process, the threads met so far (a thread met again closes a cycle), how tids read from the
    /// process's memory map to its threads, and its memory.
    struct BlockerSearch {
        let pid: Int32
        let memory: ProcessMemory
        let started = monotonicNow()
        var visited: [Int32]
        /// Tids the process named, resolved once each.
        var resolved: [Int32: Int32?] = [:]

        init(pid: Int32, stalledTid: Int32) {
            self.pid = pid
            memory = ProcessMemory(pid: pid)
            visited = [stalledTid]
        }

        mutating func thread(named tid: Int32) -> Int32? {
            if let known = resolved[tid] { return known }
            let thread = ThreadInspector.thread(of: pid, namespaceTid: tid)
            resolved[tid] = thread
            return thread
        }
    }

    /// What `tid`, blocked in `call` with the stack `frames` (captured in the same stop), waits for; also the
    /// deadlock its chain of holders closes, if it closes one. Every read is bounded and checked: a value that does not
    /// check out gives a note, never a holder.
    func findBlocker(_ stall: inout OpenStall, tid: Int32, call: SyscallReading, frames: [Frame]) {
        let pid = stall.assembler.report.pid
        var search = BlockerSearch(pid: pid, stalledTid: tid)
        let started = search.started
        guard let blocker = blocker(of: tid, call: call, frames: frames, search: &search, stall: &stall) else { return }
        stall.assembler.note(blocker: blocker, searchNanoseconds: monotonicNow() - started)
        let report = stall.assembler.report
        let stalled = BlockingThread(
            tid: tid, name: report.threadName, state: stall.assembler.lastState, frames: frames)
        stall.deadlock = DeadlockReport.find(
            in: blocker, stalled: stalled, pid: pid, processName: report.processName, detectedAt: started,
            stallIdentifier: report.identifier)
    }

    private func blocker(
        of tid: Int32, call: SyscallReading, frames: [Frame], search: inout BlockerSearch, stall: inout OpenStall
    ) -> Blocker? {
        switch call.number {
        case SyscallReading.futex:
            let operation = FutexOperation(UInt32(truncatingIfNeeded: call.arguments[1]))
            let address = call.arguments[0]
            let classified = LockClassifier.kind(operation: operation, frames: frames)
            let (kind, owner) = LockOwnerReader.owner(
                of: classified, address: address, waiter: tid, memory: search.memory,
                resolveThread: { search.thread(named: $0) })
            var wait = LockWait(kind: kind, address: address, operation: operation.name)
            switch owner {
            case .unknown(let note): wait.note = note
            case .thread(let holder): wait.holder = self.holder(holder, search: &search, stall: &stall)
            }
            return .lock(wait)
        case SyscallReading.wait4, SyscallReading.waitid:
            return Self.childWait(pid: search.pid, call: call).map(Blocker.child)
        case _ where call.waitsOnDescriptor:
            return Self.descriptorWait(pid: search.pid, call: call, memory: search.memory).map(Blocker.descriptor)
        default:
            return nil
        }
    }

    /// The holder's name, state, stack and, where it is blocked too, what it waits for.
    private func holder(_ tid: Int32, search: inout BlockerSearch, stall: inout OpenStall) -> BlockingThread {
        let pid = search.pid
        let name = ThreadInspector.name(pid: pid, tid: tid)
        if search.visited.contains(tid) { return BlockingThread(tid: tid, name: name, state: nil, closesCycle: true) }
        search.visited.append(tid)
        // Before the stop, which changes both.
        let state = ThreadInspector.state(pid: pid, tid: tid)
        let blocked = state?.waitReason == .lock || state?.waitReason == .child
        let call = blocked ? ThreadInspector.syscallReading(pid: pid, tid: tid) : nil
        var thread = BlockingThread(tid: tid, name: name, state: state)
        let elapsed = monotonicNow() - search.started
        guard elapsed < Self.searchBudget else {
            thread.stackNote = "not captured: the search had taken \(elapsed / 1_000_000) ms already"
            return thread
        }
        do {
            let stack = try sampler.capture(pid: pid, tid: tid, maxFrames: maxFrames)
            let images = self.images(for: &stall, covering: stack.addresses)
            let named = AsyncCallers.splice(
                into: symbolicator.symbolicate(stack.addresses, images: images), hints: stack.asyncHints, pid: pid,
                images: images, symbolicator: symbolicator)
            thread.frames = named.frames
            thread.stackNote = named.error
        } catch {
            thread.stackNote = "its stack could not be captured (\(error))"
        }
        guard let call else { return thread }
        guard search.visited.count <= Self.longestChain else {
            thread.stackNote = [thread.stackNote, "the chain of holders is cut after \(Self.longestChain) threads"]
                .compactMap { $0 }.joined(separator: "; ")
            return thread
        }
        thread.blocker = blocker(of: tid, call: call, frames: thread.frames, search: &search, stall: &stall)
        return thread
    }

    /// The child a `wait4` or `waitid` of `pid` waits for, or its children for a wait on any.
    static func childWait(pid: Int32, call: SyscallReading) -> ChildWait? {
        guard var target = ChildWait.Target(call: call) else { return nil }
        let name = call.name ?? "wait4"
        let children = ThreadInspector.children(of: pid)
        let ownPid = ThreadInspector.namespacePid(of: pid)
        let nested = ownPid != nil && ownPid != pid
        var chosen: [Int32]
        var note: String?
        if case .pidDescriptor(let descriptor) = target {
            // fdinfo names the child as this /proc numbers it.
            guard let child = ThreadInspector.pidOfDescriptor(descriptor, in: pid) else {
                return ChildWait(
                    target: target, call: name, children: [], note: "the child its pidfd names could not be read")
            }
            target = .child(child)
            chosen = [child]
        } else {
            switch target {
            case .child(let wanted):
                let found =
                    nested
                    ? children.first { ThreadInspector.namespacePid(of: $0) == wanted }
                    : children.contains(wanted) || Self.parent(of: wanted) == pid ? wanted : nil
                chosen = found.map { [$0] } ?? []
                // Reported as this /proc numbers it, as the children are.
                if let found { target = .child(found) }
                if found == nil { note = "it has no child with pid \(wanted) (reaped already, or another's)" }
            case .processGroup(let group) where !nested:
                let wanted = group == 0 ? ThreadInspector.processGroup(of: pid) : group
                chosen = children.filter { ThreadInspector.processGroup(of: $0) == wanted }
            case .processGroup:
                chosen = children
                note = "process groups are not compared across pid namespaces: every child is listed"
            case .anyChild, .pidDescriptor:
                chosen = children
            }
            if chosen.isEmpty, note == nil { note = "no child could be found in /proc" }
        }
        if chosen.count > ChildWait.maximumListed {
            note = "\(chosen.count - ChildWait.maximumListed) more children not listed"
            chosen = Array(chosen.prefix(ChildWait.maximumListed))
        }
        let listed = chosen.map { child in
            ChildProcess(
                pid: child, name: FileBytes.text("/proc/\(child)/comm")?.trimmingWhitespace(),
                commandLine: ThreadInspector.commandLine(pid: child),
                state: ThreadInspector.state(pid: child, tid: child))
        }
        return ChildWait(target: target, call: name, children: listed, note: note)
    }

    /// `PPid` of a process, where readable: the children list needs `CONFIG_PROC_CHILDREN`, the parent does not.
    static func parent(of pid: Int32) -> Int32? {
        let line = FileBytes.text("/proc/\(pid)/status")?.split(separator: "\n").first { $0.hasPrefix("PPid:") }
        return line?.split(whereSeparator: \.isWhitespace).last.flatMap { Int32($0) }
    }
}
