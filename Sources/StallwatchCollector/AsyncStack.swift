// A captured stack's async callers, read from the target's heap after its thread was released.
import StallwatchCore
import StallwatchImages
import StallwatchUnwind

extension RemoteStack {
    /// Where each frame may keep an async context, as the capture read it while the thread was stopped.
    var asyncHints: [AsyncContextHint] {
        zip(frameRecordContexts, r14Values).map { AsyncContextHint(frameRecord: $0, register: $1) }
    }
}

extension AsyncCallers {
    /// The named native frames of a stack captured in process `pid`, with the async callers of the task it runs.
    static func splice(
        into frames: [Frame], hints: [AsyncContextHint], pid: Int32, images: ProcessImages, symbolicator: Symbolicator
    ) -> Result {
        splice(into: frames, hints: hints, images: images, memory: ProcessMemory(pid: pid), symbolicator: symbolicator)
    }
}
