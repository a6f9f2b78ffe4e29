// The `event-loops` scenario: a pool of epoll loop threads named as SwiftNIO names its event loops, one handler that
// blocks its loop and one that burns its CPU, while the main thread only waits for the pool (no run loop at all).
import CStallwatchSystem
import Foundation
import StallwatchCore

/// Three epoll loops, `NIO-ELT-0-#0` … `#2`, each woken through its eventfd to run a "channel handler".
///
/// Like a NIO server's main thread blocked in `closeFuture.wait()`, the main thread waits in `pthread_join` for the
/// whole run: it is no event loop, and must not be reported as one endless stall.
enum EventLoopPool {
    static let loopCount = 3
    /// Added to the timeline's lead-in before the first stall.
    static let extraLeadIn: Duration = .milliseconds(700)
    /// The names SwiftNIO gives the loops of its first `MultiThreadedEventLoopGroup`.
    static func name(ofLoop index: Int) -> String { "NIO-ELT-0-#\(index)" }

    /// Runs the pool until the timeline ends; returns when every loop has exited.
    static func run(_ timeline: StallTimeline) {
        let loops = (0..<loopCount).map { EventLoop(index: $0, timeline: timeline) }
        var threads: [pthread_t] = []
        for loop in loops {
            var thread = pthread_t()
            let box = Unmanaged.passRetained(loop).toOpaque()
            guard
                pthread_create(
                    &thread, nil,
                    { argument in
                        let loop = Unmanaged<EventLoop>.fromOpaque(argument!).takeRetainedValue()
                        loop.run()
                        return nil
                    }, box) == 0
            else { continue }
            threads.append(thread)
        }
        // The scheduler: odd stalls on loop #1 (a handler that blocks), even ones on loop #2 (one that burns CPU). Later
        // than the timeline says: from outside, a loop is watched only once seen at rest, so `stallwatch attach` must
        // have had a look at the loops before the first stall.
        let starts = timeline.stallIndices.map { timeline.start(ofStall: $0) + Self.extraLeadIn }
        BackgroundTimeline.start(named: "loop-scheduler", at: starts + [timeline.end + Self.extraLeadIn]) { position in
            if position > starts.count {
                for loop in loops { loop.wake(with: EventLoop.quit) }
            } else {
                loops[position % 2 == 1 ? 1 : 2].wake(with: UInt64(position))
            }
        }
        for thread in threads { pthread_join(thread, nil) }
    }
}

/// One epoll loop thread, resting in `epoll_wait` between events, as NIO's `SelectableEventLoop` does.
private final class EventLoop: @unchecked Sendable {
    /// The eventfd value that tells the loop to exit.
    static let quit = UInt64.max - 1

    let index: Int
    let timeline: StallTimeline
    private let epoll: Int32
    private var wakeup: Int32 = -1

    init(index: Int, timeline: StallTimeline) {
        self.index = index
        self.timeline = timeline
        var wakeup: Int32 = -1
        epoll = sw_epoll_with_eventfd(&wakeup)
        self.wakeup = wakeup
    }

    func wake(with value: UInt64) {
        var value = value
        _ = write(wakeup, &value, 8)
    }

    func run() {
        _ = sw_set_thread_name(EventLoopPool.name(ofLoop: index))
        while epoll >= 0 {
            guard sw_epoll_wait_one(epoll, -1) > 0 else { continue }
            var value: UInt64 = 0
            guard read(wakeup, &value, 8) == 8 else { continue }
            // An eventfd adds up its writes: the quit value stands out whatever came before it.
            if value >= Self.quit { return }
            handle(stall: Int(value))
        }
    }

    private func handle(stall index: Int) {
        let blocking = index % 2 == 1
        let stall = StallMeasurement(
            scenario: .eventLoops, index: index, duration: timeline.stallDuration,
            culprit: blocking ? DemoScenario.eventLoopBlockingCulprit : DemoScenario.eventLoopCPUCulprit,
            thread: (EventLoopPool.name(ofLoop: self.index), sw_thread_id()))
        if blocking {
            WorkResults.keep(AccountLookupHandler.channelRead(taking: timeline.stallDuration))
        } else {
            WorkResults.keep(ResponseEncoder.write(until: stall.deadline))
        }
        stall.finish()
    }
}

/// A channel handler that does what an event loop must never do: a blocking call.
enum AccountLookupHandler {
    @inline(never)
    static func channelRead(taking duration: Duration) -> UInt64 {
        queryDatabaseBlocking(for: duration) ? 1 : 0
    }

    /// One `usleep`, standing for a synchronous database client.
    @inline(never)
    static func queryDatabaseBlocking(for duration: Duration) -> Bool {
        usleep(useconds_t(duration.nanoseconds / 1000)) == 0
    }
}

/// A handler that encodes a response far too large to encode on the loop.
enum ResponseEncoder {
    @inline(never)
    static func write(until deadline: MonotonicInstant) -> UInt64 {
        compressBody(until: deadline) &+ 1
    }

    /// FNV-1a over a counter until `deadline`.
    @inline(never)
    static func compressBody(until deadline: MonotonicInstant) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var byte: UInt64 = 0
        repeat {
            for _ in 0..<262_144 {
                hash = (hash ^ (byte & 0xff)) &* 0x0000_0100_0000_01b3
                byte &+= 1
            }
        } while MonotonicInstant.now() < deadline
        return hash
    }
}
