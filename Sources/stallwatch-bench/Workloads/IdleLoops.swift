// The idle-loops workload: 16 epoll loop threads named as SwiftNIO names its loops, all at rest for the whole run,
// for the collector's cost of watching them from /proc.
import CStallwatchSystem
import Foundation

enum IdleLoops {
    static let threadCount = 16

    /// Starts the loops, sleeps `seconds`, and reports the main thread's (empty) result line: the measurement is
    /// stallwatch's CPU, taken by the driver.
    static func run(seconds: Double) -> WorkloadResult {
        for index in 0..<threadCount {
            let thread = Thread {
                _ = sw_set_thread_name("NIO-ELT-0-#\(index)")
                var wakeup: Int32 = -1
                let epoll = sw_epoll_with_eventfd(&wakeup)
                while epoll >= 0 { _ = sw_epoll_wait_one(epoll, -1) }
            }
            thread.start()
        }
        return WorkloadResult.measure {
            usleep(useconds_t(seconds * 1e6))
            return 1
        }
    }
}
