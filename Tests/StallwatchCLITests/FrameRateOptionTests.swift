// `--fps`, `--fps-max-frame` and `--fps-pow` on `run` and `demo`.
import StallwatchCLI
import StallwatchCollector
import StallwatchCore
import Testing

@Suite struct FrameRateOptionTests {
    func watch(_ arguments: [String]) -> WatchOptions? {
        switch invocation(arguments) {
        case .run(let options)?: options.watch
        case .demo(let options)?: options.watch
        default: nil
        }
    }

    @Test func offByDefault() {
        #expect(watch(["run", "./d"])?.frameRate == nil)
    }

    @Test func flagUsesMatrixDefaults() {
        #expect(watch(["run", "--fps", "./d"])?.frameRate == FrameRateMonitor.Configuration())
        #expect(watch(["demo", "--fps"])?.frameRate == FrameRateMonitor.Configuration())
    }

    /// The tuning options imply `--fps`, in any order.
    @Test func tuningImpliesTheFlag() {
        var expected = FrameRateMonitor.Configuration()
        expected.maxFrameInterval = 80_000_000
        expected.powFactor = 2
        #expect(watch(["run", "--fps-pow", "2", "--fps-max-frame", "80ms", "./d"])?.frameRate == expected)
        #expect(watch(["demo", "--fps-max-frame=80ms", "--fps", "--fps-pow=2"])?.frameRate == expected)
    }

    @Test(arguments: [
        ["run", "--fps-max-frame", "10ms", "./d"], ["run", "--fps-max-frame", "11s", "./d"],
        ["run", "--fps-pow", "0.5", "./d"], ["run", "--fps-pow", "x", "./d"], ["demo", "--fps=1"],
    ])
    func badValuesAreRejected(arguments: [String]) {
        guard case .failure = ArgumentParser.parse(arguments) else {
            Issue.record("accepted \(arguments)")
            return
        }
    }

    @Test func attachHasNoFPS() {
        guard case .failure(let error) = ArgumentParser.parse(["attach", "--fps", "42"]) else {
            Issue.record("attach accepted --fps")
            return
        }
        #expect(error.message.hasPrefix("Unknown option '--fps'"))
    }
}
