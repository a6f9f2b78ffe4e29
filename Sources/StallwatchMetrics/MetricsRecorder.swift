// Where the watching thread writes the metrics and a scrape reads them: one short lock, held only to change or copy.
import Synchronization

/// The metrics of one watch, shared by the thread that watches (the collector, or library mode's watcher) and the
/// endpoint's thread.
///
/// The watching side holds the lock for one small change; a scrape holds it only to copy the value (its arrays and
/// dictionaries are shared, not duplicated, until the next change), and renders the copy after letting go. So a scrape
/// never holds up watching, however slow its client is.
public final class MetricsRecorder: Sendable {
    private let state = Mutex(StallMetrics())

    public init() {}

    /// Changes the metrics; `body` must be quick (no I/O).
    public func update(_ body: (inout StallMetrics) -> Void) {
        state.withLock { body(&$0) }
    }

    /// A copy of the metrics now.
    public func snapshot() -> StallMetrics {
        state.withLock { $0 }
    }
}
