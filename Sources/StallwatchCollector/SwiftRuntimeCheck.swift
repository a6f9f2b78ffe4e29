// Refuses to preload the agent into a program built against a different Swift runtime.
import FoundationEssentials
import Glibc
import StallwatchCore
import StallwatchSymbols

/// Swift on Linux has no stable ABI: the agent (a Swift library) must share the workload's Swift runtime.
///
/// Asks the dynamic loader which `libswiftCore.so` the workload and the agent library would load (`ld.so --list`,
/// which runs none of their code, as `ldd` does) and compares them. The agent's, not stallwatch's own: stallwatch
/// carries its Swift runtime inside.
enum SwiftRuntimeCheck {
    static let loader = "/lib64/ld-linux-x86-64.so.2"

    /// A one-line explanation if the workload uses another Swift runtime than the agent; nil if it matches, uses
    /// none, or cannot be checked (a script, a static binary).
    static func mismatch(executable: String, agentLibrary: String) -> String? {
        guard let theirs = runtimePath(of: executable),
            let ours = runtimePath(of: agentLibrary).map(realPath)
        else {
            return nil
        }
        guard realPath(theirs) != ours else { return nil }
        return "'\(executable)' uses the Swift runtime \(theirs), but the stallwatch agent was built with \(ours);"
            + " Swift has no stable ABI on Linux, so preloading the agent could crash it."
            + " Build the workload and stallwatch with the same toolchain"
    }

    /// The `libswiftCore.so` the loader resolves for `executable` (a program or a shared library), or nil.
    static func runtimePath(of executable: String) -> String? {
        guard FileManager.default.isExecutableFile(atPath: loader), isDynamicELF(executable) else { return nil }
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        guard
            let text = HelperProcess.run(
                loader, arguments: ["--list", executable], environment: environment, input: "")
        else { return nil }
        for line in text.split(separator: "\n") where line.contains("libswiftCore.so") {
            let parts = line.split(separator: " ")
            if let arrow = parts.firstIndex(of: "=>"), arrow + 1 < parts.count, parts[arrow + 1].hasPrefix("/") {
                return String(parts[arrow + 1])
            }
        }
        return nil
    }

    /// Whether the file starts with the ELF magic (scripts are skipped: their interpreter is checked when the
    /// agent loads into it).
    static func isDynamicELF(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var magic = [UInt8](repeating: 0, count: 4)
        return Glibc.read(descriptor, &magic, 4) == 4 && magic == [0x7f, 0x45, 0x4c, 0x46]
    }

    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
