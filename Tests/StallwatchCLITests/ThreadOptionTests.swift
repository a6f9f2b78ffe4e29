// `--thread`: repeatable on run, demo and attach, replacing the default `main`; bad selectors are usage errors.
import StallwatchCLI
import StallwatchCore
import Testing

@Suite struct ThreadOptionTests {
    @Test func defaultIsTheMainThread() {
        guard case .run(let options)? = invocation(["run", "--", "app"]) else { return }
        #expect(options.watch.settings.threads == [.main])
    }

    @Test func repeatedSelectorsAddUpAndReplaceTheDefault() {
        guard case .run(let options)? = invocation(["run", "--thread", "NIO-ELT-*", "--thread=4250", "--", "app"])
        else { return }
        #expect(options.watch.settings.threads == [.name("NIO-ELT-*"), .tid(4250)])
    }

    @Test func attachTakesThemToo() {
        guard case .attach(let options)? = invocation(["attach", "--thread", "all", "--thread", "main", "42"]) else {
            return
        }
        #expect(options.watch.settings.threads == [.all, .main])
    }

    @Test func theEventLoopDemoWatchesItsLoopsUnlessToldOtherwise() {
        guard case .demo(let chosen)? = invocation(["demo", "--scenario", "event-loops"]) else { return }
        #expect(chosen.watch.settings.threads == [.name("NIO-ELT-*")])
        guard case .demo(let told)? = invocation(["demo", "--scenario", "event-loops", "--thread", "main"]) else {
            return
        }
        #expect(told.watch.settings.threads == [.main])
        guard case .demo(let other)? = invocation(["demo", "--scenario", "cpu"]) else { return }
        #expect(other.watch.settings.threads == [.main])
    }

    @Test func anEmptySelectorIsAUsageError() {
        let error = usageError(["attach", "--thread", "", "42"])
        #expect(
            error?.message
                == "The value '' is invalid for '--thread <selector>': a thread selector is 'main', 'all', a name"
                + " glob or a tid, not empty")
        #expect(error?.topic == .attach)
    }
}
