// Watching overhead to the instruction: the main thread's instructions per iteration, counted by valgrind's callgrind.
import Foundation

/// Runs each workload for a fixed amount of work, bare, with empty observers, with the classic detector and under
/// `stallwatch run`, inside callgrind with one count per thread, and takes the main thread's instructions.
///
/// Instruction counts are deterministic where time ratios on a shared 2-CPU machine are not: the difference of a
/// short and a long run, divided by the difference in work, cancels start-up (the runtime, Foundation, the agent's
/// set-up) and leaves what one iteration costs. The watcher thread, the collector and valgrind's own work are not
/// on the main thread and do not count.
struct InstructionBenchmark {
    let products: BuildProducts

    enum Variant: String, CaseIterable {
        case bare
        case emptyObservers = "empty observers"
        case classic = "classic detector"
        case watched = "stallwatch run"

        var workloadFlags: [String] {
            switch self {
            case .bare, .watched: []
            case .emptyObservers: ["--empty-observers"]
            case .classic: ["--classic"]
            }
        }
    }

    /// The two amounts of work per workload: tight loops iterate, the realistic loop completes callbacks and blocks
    /// (each about 15 µs of work, so fewer of them).
    static func sizes(_ workload: BenchCommand.Workload) -> (short: UInt64, long: UInt64) {
        workload == .realistic ? (1_000, 3_000) : (20_000, 60_000)
    }

    /// The transitions the agent observes in one iteration: `entry` and `exit` for the Foundation loop (each handled
    /// source ends one `CFRunLoopRunInMode` call), none for the CoreFoundation one (it never sleeps, and the agent
    /// leaves out `beforeSources`).
    static func observedTransitions(_ workload: BenchCommand.Workload) -> Int {
        workload == .tightLoopFoundation ? 2 : 0
    }

    /// The bench and the agent without their DWARF, which valgrind's reader gives up on (Swift's DWARF 5): their
    /// symbol tables are all callgrind needs.
    struct StrippedCopies {
        let directory: URL
        var bench: String { directory.appendingPathComponent("stallwatch-bench").path }
        var agent: String { directory.appendingPathComponent("libStallwatchAgent.so").path }

        /// The instructions executed inside the agent's library in the longer run of a pair beyond the shorter.
        func agentCode(few: CallgrindProfile, many: CallgrindProfile) -> Double {
            let object = "/" + URL(fileURLWithPath: agent).lastPathComponent
            return Double(many.instructions(inObjectEndingWith: object))
                - Double(few.instructions(inObjectEndingWith: object))
        }
    }

    func run() throws(BenchError) -> SectionReport {
        guard let valgrind = StackTool.onPath("valgrind"), let objcopy = StackTool.onPath("objcopy") else {
            BenchOutput.progress("instructions: skipped: valgrind or objcopy not found")
            return SectionReport(lines: [
                "instructions: skipped: valgrind or objcopy not found (Scripts/bench installs it)"
            ])
        }
        let copies = StrippedCopies(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("stallwatch-bench-ir-\(getpid())"))
        try? FileManager.default.createDirectory(at: copies.directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copies.directory) }
        for (original, copy) in [(products.bench, copies.bench), (products.agent, copies.agent)] {
            let strip = try ChildProcess([objcopy, "--strip-debug", original, copy])
            guard try strip.wait(timeout: 120) == 0 else { throw BenchError("objcopy failed on \(original)") }
        }
        var table = ResultTable(
            "Main-thread instructions per unit of work (callgrind; the difference of two fixed-work runs)",
            header: ["workload"] + Variant.allCases.map(\.rawValue) + [
                "watched − empty observers", "in the agent's code", "bare/watched",
            ])
        var report = SectionReport()
        let workloads: [BenchCommand.Workload] = [.tightLoop, .tightLoopFoundation, .realistic]
        for workload in workloads {
            var perUnit: [Variant: Double] = [:]
            var agentCodePerUnit: Double = 0
            for variant in Variant.allCases {
                BenchOutput.progress("instructions: \(workload.rawValue), \(variant.rawValue)")
                let (short, long) = Self.sizes(workload)
                let few = try profile(workload, variant, iterations: short, valgrind: valgrind, copies: copies)
                let many = try profile(workload, variant, iterations: long, valgrind: valgrind, copies: copies)
                let work = Double(long - short)
                perUnit[variant] = (Double(many.total) - Double(few.total)) / work
                if variant == .watched { agentCodePerUnit = copies.agentCode(few: few, many: many) / work }
            }
            let bare = perUnit[.bare] ?? 0
            let watched = perUnit[.watched] ?? 0
            let own = watched - (perUnit[.emptyObservers] ?? 0)
            let ratio = watched > 0 ? bare / watched : 0
            table.add(
                [workload.rawValue] + Variant.allCases.map { Format.fixed(perUnit[$0] ?? 0, 0) }
                    + [Format.fixed(own, 0), Format.fixed(agentCodePerUnit, 1), Format.fixed(ratio, 3)])
            let goal: Double = workload == .realistic ? 0.98 : 0.80
            report.targets.append(
                TargetCheck(
                    "\(workload.rawValue) instructions, bare/watched", measured: Format.fixed(ratio, 3),
                    target: "≥ \(Format.fixed(goal, 2))", met: ratio >= goal,
                    limit: "CoreFoundation's observer dispatch: see the empty-observers column"))
            guard workload != .realistic else { continue }
            // Per observed transition where the loop passes some every iteration; the tight loop passes none (what
            // the agent still costs it is the progress probes, spread over the iterations between two of them).
            let transitions = Self.observedTransitions(workload)
            guard transitions > 0 else {
                report.targets.append(
                    TargetCheck(
                        "\(workload.rawValue): the agent's own instructions per iteration",
                        measured: Format.fixed(agentCodePerUnit, 0), target: "≤ 20", met: agentCodePerUnit <= 20,
                        limit: "the progress probes"))
                continue
            }
            // What watching adds in the agent's code, against the same agent loaded but not watching: its
            // CFRunLoopRunSpecific then only checks the thread and the board and hands the run on, which is what
            // standing in front of CoreFoundation costs every run (as CoreFoundation's dispatch is what observing
            // costs, the empty-observers column).
            BenchOutput.progress("instructions: \(workload.rawValue), agent loaded, not watching")
            let (short, long) = Self.sizes(workload)
            let idleFew = try profile(
                workload, .bare, iterations: short, valgrind: valgrind, copies: copies, idleAgent: true)
            let idleMany = try profile(
                workload, .bare, iterations: long, valgrind: valgrind, copies: copies, idleAgent: true)
            let idlePerUnit = copies.agentCode(few: idleFew, many: idleMany) / Double(long - short)
            let perTransition = (agentCodePerUnit - idlePerUnit) / Double(transitions)
            report.lines.append(
                "\(workload.rawValue): in the agent's code per iteration \(Format.fixed(agentCodePerUnit, 1)) watched, "
                    + "\(Format.fixed(idlePerUnit, 1)) loaded but not watching (the stand-in handing each run on); "
                    + "\(transitions) observed transitions an iteration: \(Format.fixed(agentCodePerUnit / Double(transitions), 1)) "
                    + "each in all, \(Format.fixed(perTransition, 1)) each for watching")
            report.targets.append(
                TargetCheck(
                    "\(workload.rawValue): the agent's own instructions per observed transition (\(transitions) an "
                        + "iteration), beyond the stand-in's hand-on",
                    measured: Format.fixed(perTransition, 1), target: "≤ 20", met: perTransition <= 20,
                    limit: "each run's entry and exit (the mode, the nesting model, the stamp, the store, the"
                        + " slow-reasons check) and the frame that keeps the outer state across CoreFoundation's run"))
        }
        report.tables.append(table)
        return report
    }

    /// The main thread's profile for one run of `iterations`.
    private func profile(
        _ workload: BenchCommand.Workload, _ variant: Variant, iterations: UInt64, valgrind: String,
        copies: StrippedCopies, idleAgent: Bool = false
    ) throws(BenchError) -> CallgrindProfile {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallwatch-bench-callgrind-\(getpid())-\(UUID().uuidString)")
        defer { for suffix in ["", "-01", "-02", "-03", "-04"] { unlink(output.path + suffix) } }
        var arguments = [
            valgrind, "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=\(output.path)",
            copies.bench, workload.rawValue, "--iterations", String(iterations),
        ]
        arguments += variant.workloadFlags
        if variant == .watched {
            // A threshold far longer than valgrind's slowest moment: nothing here stalls, and a capture of a process
            // under valgrind would only measure valgrind.
            arguments = [products.stallwatch, "run", "--threshold", "60s", "--"] + arguments
        }
        // Loaded alone (`idleAgent`), the agent's library starts no watch: nothing tells it to.
        let environment =
            idleAgent ? ["LD_PRELOAD": copies.agent] : ["STALLWATCH_AGENT_LIBRARY": copies.agent]
        let child = try ChildProcess(arguments, environment: environment)
        let status = try child.wait(timeout: 900)
        guard status == 0 else {
            throw BenchError("\(arguments.joined(separator: " ")) exited with \(status): \(child.standardError)")
        }
        // Thread 1 is the main thread.
        guard let text = try? String(contentsOfFile: output.path + "-01", encoding: .utf8),
            let profile = CallgrindProfile(text: text)
        else {
            throw BenchError("callgrind wrote no main-thread summary for \(workload.rawValue) (\(variant.rawValue))")
        }
        return profile
    }
}
