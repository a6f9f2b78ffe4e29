// Finds the binaries under test: the ones built beside this executable, in the same build directory.
import Foundation

/// The executables and the agent library one `swift build` put in one directory.
struct BuildProducts {
    let directory: String
    var stallwatch: String { directory + "/stallwatch" }
    var demo: String { directory + "/stallwatch-demo" }
    var agent: String { directory + "/libStallwatchAgent.so" }
    var bench: String { directory + "/stallwatch-bench" }
    /// The library-mode app of the capture section.
    var benchApp: String { directory + "/stallwatch-bench-app" }

    /// The products beside the running `stallwatch-bench`, so a benchmark never mixes builds.
    static func besideThisExecutable() throws(BenchError) -> BuildProducts {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw BenchError("cannot read /proc/self/exe")
        }
        let products = BuildProducts(directory: (path as NSString).deletingLastPathComponent)
        for file in [products.stallwatch, products.demo, products.agent, products.bench, products.benchApp]
        where !FileManager.default.fileExists(atPath: file) {
            throw BenchError("\(file) is missing: build every product first (swift build -c release)")
        }
        return products
    }
}

/// Why a benchmark could not run.
struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

extension BuildProducts {
    /// Starts `stallwatch-demo --scenario cpu` with one stall of `seconds`, waits until that stall is under
    /// way, runs `body` against it, and kills it.
    ///
    /// The capture and stack sections both need a main thread held in a known function (`ChecksumEngine
    /// .crunchChecksums`) for as long as they measure.
    func withStalledDemo<Result>(
        lasting seconds: Int, _ body: (ChildProcess) throws(BenchError) -> Result
    ) throws(BenchError) -> Result {
        let demo = try ChildProcess([
            demo, "--scenario", "cpu", "--duration", "\(seconds)s", "--period", "\(seconds + 1)s", "--stalls", "1",
        ])
        defer {
            demo.send(SIGKILL)
            _ = try? demo.wait(timeout: 10)
        }
        _ = try demo.waitForLine(fromStandardError: true, timeout: 10) { $0.hasPrefix("stallwatch-demo: scenario=") }
        // The stall begins 300 ms after the banner (the demo's lead-in).
        MonotonicClock.sleep(seconds: 0.5)
        return try body(demo)
    }
}
