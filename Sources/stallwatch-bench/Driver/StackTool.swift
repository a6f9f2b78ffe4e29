// Item 4's contenders: `stallwatch stack` and the two stack dumpers a Linux user reaches for instead.
import Foundation
import StallwatchSymbols

/// One tool that prints a running process's stack: how to run it and how often the comparison does.
struct StackTool {
    /// The command as the docs write it, `PID` standing for the target.
    let label: String
    let executable: String
    /// The arguments after the executable, with `"PID"` replaced by the target's pid when run.
    let template: [String]
    /// Runs against the gap target, and against the stalled demo.
    let runs: Int
    let demoRuns: Int
    /// The Debian package that installs it, for the line that says it is missing.
    let package: String?
    /// Set in its environment on top of the driver's.
    var environment: [String: String] = [:]
    /// A variant of stallwatch itself, shown for comparison: no targets are checked against it.
    var isVariant = false

    /// The full command line against `pid`.
    func arguments(pid: pid_t) -> [String] {
        [executable] + template.map { $0 == "PID" ? String(pid) : $0 }
    }

    /// `stallwatch stack PID` from the products under test, then `eu-stack -1 -p PID` and
    /// `gdb -p PID -batch -ex bt` from `PATH`.
    ///
    /// - Returns: The tools, or the missing peers' names with their Debian packages.
    static func contenders(products: BuildProducts) -> (tools: [StackTool], missing: [String]) {
        let stallwatch = StackTool(
            label: "stallwatch stack PID", executable: products.stallwatch, template: ["stack", "PID"], runs: 10,
            demoRuns: 3, package: nil)
        let peers: [(name: String, label: String, template: [String], runs: Int, demoRuns: Int, package: String)] = [
            ("eu-stack", "eu-stack -1 -p PID", ["-1", "-p", "PID"], 10, 3, "elfutils"),
            ("gdb", "gdb -p PID -batch -ex bt", ["-p", "PID", "-batch", "-ex", "bt"], 3, 1, "gdb"),
        ]
        // The same command reading DWARF with the toolchain's llvm-symbolizer instead of in process: what the
        // built-in reader saves.
        var tools = [stallwatch]
        if let symbolizer = LLVMSymbolizer.locate(environment: [:]) {
            var external = StackTool(
                label: "STALLWATCH_SYMBOLIZER=llvm-symbolizer stallwatch stack PID", executable: products.stallwatch,
                template: ["stack", "PID"], runs: 10, demoRuns: 3, package: nil)
            external.environment = [LLVMSymbolizer.environmentVariable: symbolizer]
            external.isVariant = true
            tools.append(external)
        }
        var missing: [String] = []
        for peer in peers {
            if let path = onPath(peer.name) {
                tools.append(
                    StackTool(
                        label: peer.label, executable: path, template: peer.template, runs: peer.runs,
                        demoRuns: peer.demoRuns, package: peer.package))
            } else {
                missing.append("\(peer.name) (Debian package \(peer.package))")
            }
        }
        return (tools, missing)
    }

    /// The first executable file called `name` in a directory of `PATH`.
    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}
