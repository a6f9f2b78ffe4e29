// Finds the binaries under test: the ones built beside this executable, in the same build directory.
import Foundation

/// The executables and the agent library one `swift build` put in one directory.
struct BuildProducts {
    let directory: String
    var stallwatch: String { directory + "/stallwatch" }
    var demo: String { directory + "/stallwatch-demo" }
    var agent: String { directory + "/libStallwatchAgent.so" }
    var bench: String { directory + "/stallwatch-bench" }

    /// The products beside the running `stallwatch-bench`, so a benchmark never mixes builds.
    static func besideThisExecutable() throws(BenchError) -> BuildProducts {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw BenchError("cannot read /proc/self/exe")
        }
        let products = BuildProducts(directory: (path as NSString).deletingLastPathComponent)
        for file in [products.stallwatch, products.demo, products.agent, products.bench]
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
