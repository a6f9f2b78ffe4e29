// The `task` scenario: a detached Swift task, on one of Swift concurrency's executor threads, that decodes a photo
// between two awaits at each stall, so its thread runs no other job meanwhile, while the main run loop stays
// responsive.
import CStallwatchSystem
import Foundation
import StallwatchCore

/// Starts the importing task: it sleeps (an await) until each stall and blocks its executor thread through it.
enum ExecutorTask {
    static func start(_ timeline: StallTimeline) {
        Task.detached {
            await PhotoImporter.importLibrary(timeline)
        }
    }
}

enum PhotoImporter {
    /// Awaits each stall's start, then imports one photo: the task's async callers are this and the detached task.
    static func importLibrary(_ timeline: StallTimeline) async {
        for index in timeline.stallIndices {
            let wait = timeline.start(ofStall: index) - .now()
            if wait > .zero { try? await Task.sleep(for: wait) }
            await importPhoto(index, timeline)
        }
    }

    @inline(never)
    static func importPhoto(_ index: Int, _ timeline: StallTimeline) async {
        // An await first, so that the photo is decoded in a job of its own, as after any suspension.
        await Task.yield()
        let tid = sw_thread_id()
        let name = ThreadInspector.name(pid: getpid(), tid: tid) ?? "?"
        let stall = StallMeasurement(
            scenario: .task, index: index, duration: timeline.stallDuration, thread: (name, tid))
        WorkResults.keep(decodeFullResolution(until: stall.deadline))
        stall.finish()
    }

    /// FNV-1a over a counter until `deadline`: a decoder that never awaits.
    @inline(never)
    static func decodeFullResolution(until deadline: MonotonicInstant) -> UInt64 {
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
