// Entry point: parse the command line, then run one workload or the driver. The one exit point.
import Foundation

@main
enum StallwatchBench {
    static func main() {
        exit(run(Array(CommandLine.arguments.dropFirst())))
    }

    /// Does what the arguments ask and returns the exit status: 0, 1 when a benchmark failed to run,
    /// 64 for a usage error.
    private static func run(_ arguments: [String]) -> Int32 {
        let command: BenchCommand
        do {
            command = try BenchCommand.parse(arguments)
        } catch {
            BenchOutput.error(error.message + "\nSee 'stallwatch-bench --help'.")
            return 64
        }
        switch command {
        case .help:
            print(BenchCommand.helpText)
        case .workload(let workload, let options):
            switch options.inProcess {
            case .classic: ClassicDetector.install()
            case .emptyObservers: EmptyObservers.install()
            case nil: break
            }
            let result =
                switch workload {
                case .tightLoop:
                    if let window = options.window {
                        WindowedLoop.run(seconds: options.seconds, window: window)
                    } else {
                        TightLoop.run(seconds: options.seconds, iterations: options.iterations, driver: .coreFoundation)
                    }
                case .tightLoopFoundation:
                    TightLoop.run(seconds: options.seconds, iterations: options.iterations, driver: .foundation)
                case .realistic: RealisticLoop.run(seconds: options.seconds, units: options.iterations)
                case .tightLoopThread: TightLoop.runOnThread(seconds: options.seconds)
                case .idleLoops: IdleLoops.run(seconds: options.seconds)
                }
            BenchOutput.line(result.line)
        case .gapTarget(let seconds, let stalls):
            GapRecorder.run(seconds: seconds, stalls: stalls)
        case .drive(let options):
            do {
                try Driver(options: options, products: BuildProducts.besideThisExecutable()).run()
            } catch {
                BenchOutput.error("\(error)")
                return 1
            }
        }
        return 0
    }
}
