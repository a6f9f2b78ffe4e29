// Entry point: parse the command line, arm the chosen scenario on the main run loop, and run it to the end.
import CStallwatchSystem
import Foundation

@main
enum StallwatchDemo {
    static func main() {
        exit(run(Array(CommandLine.arguments.dropFirst())))
    }

    /// Does what the arguments ask and returns the exit status: 0, or 64 for a usage error.
    private static func run(_ arguments: [String]) -> Int32 {
        let command: DemoCommand
        do {
            command = try DemoCommand.parse(arguments)
        } catch {
            DemoStderr.error(error.message)
            return 64
        }
        switch command {
        case .help:
            print(DemoCommand.helpText)
        case .list:
            print(Scenario.listing)
        case .run(let options):
            let timeline = StallTimeline(
                origin: .now(),
                stallCount: options.stallCount,
                stallDuration: options.stallDuration,
                period: options.period
            )
            if options.forbidPtrace, sw_set_dumpable(0) != 0 {
                DemoStderr.error("cannot make the process non-dumpable: \(String(cString: strerror(errno)))")
                return 1
            }
            DemoStderr.announce(options)
            options.scenario.install(on: timeline)
            if options.scenario.usesDispatchMain {
                // No run loop at all: the main queue is served by dispatchMain(), which never returns.
                DispatchQueue.global().asyncAfter(deadline: .now() + (timeline.end - .now()).seconds) { exit(0) }
                dispatchMain()
            }
            if options.scenario == .eventLoops {
                EventLoopPool.run(timeline)
            } else if options.scenario == .pumpLoop {
                PumpLoop.run(timeline)
            } else {
                RunLoop.main.run(until: timeline.end.date)
            }
        }
        return 0
    }
}
