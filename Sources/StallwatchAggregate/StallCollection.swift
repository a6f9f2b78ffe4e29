// The stalls of any number of NDJSON inputs, merged into one value: interned frames and stacks, runs, stalls.
import StallwatchCore

/// Every stall read from the inputs, with frames and stacks stored once however often they recur.
///
/// Memory grows with the number of stalls and samples (a few dozen bytes each) and with the distinct frames and
/// stacks, not with the size of the input: a frame seen a million times is decoded and kept once.
public struct StallCollection: Sendable {
    /// Distinct frames; ``StallSample/stack`` and ``Stall/culprit`` point into it.
    public internal(set) var frames: [Frame] = []
    /// Distinct stacks, innermost frame first, as indices into ``frames``.
    public internal(set) var stacks: [[Int32]] = []
    /// One per stallwatch run found: a file holds one run per `summary` record (and one more for records after
    /// the last summary).
    public internal(set) var runs: [Run] = []
    /// Every stall, in input order.
    public internal(set) var stalls: [Stall] = []
    /// What was read from each input, and what was wrong with it.
    public internal(set) var sources: [SourceReport] = []
    /// Every `deadlock` record, in input order.
    public internal(set) var deadlocks: [Deadlock] = []

    public init() {}

    /// One run of stallwatch: which input it came from and where.
    public struct Run: Sendable, Equatable {
        /// The input's name as given (`-` for stdin).
        public var source: String
        /// 1 for the first run in its input.
        public var ordinal: Int
        /// The `host` of its records (`unknown` for records without one).
        public var host: String
        /// The processes whose stalls it reported, in order of appearance.
        public var pids: [Int]
        /// Frame-drop periods (`frame-drops` records) as (pid, start, end) in Unix milliseconds.
        public var frameDrops: [FrameDrop] = []
        /// The run's own summary, where one was read.
        public var runMs: Double?
        public var timedOut = false
    }

    public struct FrameDrop: Sendable, Equatable {
        public var pid: Int
        public var startMs: Double
        public var endMs: Double
    }

    /// One stall record (or, for an input cut short, a `stall-detected` record with no `stall` after it).
    public struct Stall: Sendable, Equatable {
        /// Index into ``StallCollection/runs``.
        public var run: Int32
        public var host: String
        public var pid: Int
        public var tid: Int
        public var process: String
        /// The stalled thread's name (`threadName`), recorded for threads other than the main one.
        public var threadName: String?
        /// The stall's number within its process.
        public var id: Int
        /// When it started, Unix milliseconds (from `startedAt`).
        public var startMs: Double
        /// `nil` while unfinished.
        public var durationMs: Double?
        /// The length an unfinished stall had reached when its run ended (`lengthMs`, where recorded).
        public var lengthMs: Double?
        public var unfinished: Bool
        /// Shortened by `--rate-limit`: counted with its duration and culprit, no samples.
        public var suppressed = false
        public var thresholdMs: Double?
        public var callout: String?
        public var fingerprint: String
        /// Index into ``StallCollection/frames``.
        public var culprit: Int32?
        /// `cpuBound`, `blocked` or `mixed`, where recorded.
        public var verdict: String?
        public var samples: [StallSample]
        /// What the thread waited for (`blocker`), where recorded.
        public var blocker: Blocker?

        /// How long the stall is known to have lasted: its duration; for an unfinished one the length it had
        /// reached (`lengthMs`), or, in records without it, one threshold past its last sample.
        public var knownDurationMs: Double {
            if let durationMs { return durationMs }
            if let lengthMs { return lengthMs }
            let last = samples.last?.capturedAfterMs ?? 0
            return last + (thresholdMs ?? 0)
        }

        /// The stalled time each sample stands for, in the order of ``samples``: a sample stands from the
        /// previous sample (the first from the stall's start) to the next one (the last to the stall's end), so
        /// the weights add up to ``knownDurationMs``.
        public var sampleWeightsMs: [Double] {
            let end = knownDurationMs
            var weights: [Double] = []
            weights.reserveCapacity(samples.count)
            for index in samples.indices {
                let from = index == 0 ? 0 : samples[index].capturedAfterMs
                let to = index + 1 < samples.count ? samples[index + 1].capturedAfterMs : end
                weights.append(max(0, min(to, end) - min(from, end)))
            }
            return weights
        }
    }

    /// A stall's `blocker`, as much as reports need: its line, and the thread at the end of its chain of holders.
    public struct Blocker: Sendable, Equatable {
        /// `lock`, `child` or `descriptor`.
        public var kind: String
        /// The record's one-line `summary`.
        public var summary: String
        /// `mutex`, `piFutex`, … for a lock.
        public var lockKind: String?
        /// The thread the time went to: the lock's holder, or the holder at the end of a chain of them.
        public var holderTid: Int?
        public var holderName: String?
        /// Index into ``StallCollection/stacks``: that holder's stack.
        public var holderStack: Int32?
        /// The chain of holders came back on itself.
        public var deadlock = false
        /// For a child wait, the first child's command line; for a descriptor wait, the first peer's.
        public var childCommand: String?
        /// For a descriptor wait, its `object` (`pipe`, `tcp`, `unixSocket`, …).
        public var descriptorObject: String?

        public init(kind: String, summary: String) {
            self.kind = kind
            self.summary = summary
        }
    }

    /// A `deadlock` record.
    public struct Deadlock: Sendable, Equatable {
        /// Index into ``StallCollection/runs``.
        public var run: Int32
        public var pid: Int
        public var process: String
        public var summary: String
        /// How many threads wait on each other.
        public var threads: Int
    }

    /// One captured stack of a stall.
    public struct StallSample: Sendable, Equatable {
        /// From the stall's start.
        public var capturedAfterMs: Double
        /// Index into ``StallCollection/stacks``.
        public var stack: Int32
        /// The thread's state letter (`R`, `S`, `D`, ...), where recorded.
        public var state: String?
    }

    /// A stack's frames, innermost first.
    public func frames(ofStack index: Int32) -> [Frame] {
        stacks[Int(index)].map { frames[Int($0)] }
    }
}

/// How a frame is called in flame graphs, folded stacks and profiles.
extension Frame {
    /// The function name, or `image+offset`, or the address.
    public var displayName: String {
        if let symbol, !symbol.isEmpty { return symbol }
        if let imageName, let offset { return "\(imageName)+0x\(String(offset, radix: 16))" }
        return "0x\(String(address, radix: 16))"
    }

    /// Whether the frame belongs to the system (libc, the Swift runtime, Foundation, dispatch, ...).
    public var isLibrary: Bool {
        guard let image else { return true }
        return ImageClassifier.isSystemImage(image)
    }

    /// `file:line`, where known.
    public var location: String? {
        guard let file else { return nil }
        return line.map { "\(file):\($0)" } ?? file
    }
}
