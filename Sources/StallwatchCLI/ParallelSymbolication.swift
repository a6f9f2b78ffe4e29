// Names the frames of several stacks at once, one image per thread: a one-shot `stallwatch stack` spends most of its
// time reading symbol and line tables, and each image's tables are independent.
import Dispatch
import StallwatchCore
import StallwatchSymbols

/// Symbolicates stacks by image, in parallel.
///
/// The toolchain's symbolicator keeps its image cache per thread, so threads never share state; grouping the frames
/// by image means each image's symbol and line tables are read by one thread only. The frames come back exactly as
/// ``Symbolicator/symbolicate(_:images:)`` would return them for each stack.
enum ParallelSymbolication {
    /// - Parameter stacks: each stack innermost first: a program counter, then return addresses.
    static func symbolicate(_ stacks: [[UInt64]], images: ProcessImages) -> [[Frame]] {
        var groups: [String: [Key]] = [:]
        var seen: Set<Key> = []
        for stack in stacks {
            for (index, address) in stack.enumerated() where address != 0 {
                let key = Key(address: address, isProgramCounter: index == 0)
                guard seen.insert(key).inserted else { continue }
                groups[images.image(containing: address)?.path ?? "", default: []].append(key)
            }
        }
        let work = Array(groups.values)
        let results = ResultSlots<[Key: [Frame]]>(count: work.count)
        DispatchQueue.concurrentPerform(iterations: work.count) { index in
            results[index] = names(for: work[index], images: images)
        }
        var named: [Key: [Frame]] = [:]
        for index in work.indices { named.merge(results[index] ?? [:]) { first, _ in first } }
        return stacks.map { stack in
            var frames: [Frame] = []
            for (index, address) in stack.enumerated() where address != 0 {
                let key = Key(address: address, isProgramCounter: index == 0)
                frames += named[key] ?? [Frame(address: address)]
            }
            return frames
        }
    }

    /// Each distinct (address, kind) is named once: a program counter is looked up at its address, a return address
    /// at the call before it.
    private struct Key: Hashable, Sendable {
        let address: UInt64
        let isProgramCounter: Bool
    }

    /// One image's frames, on the calling thread: program counters one call each, return addresses in one call.
    /// A frame and the frames inlined into it come out together, the inlined ones first.
    private static func names(for keys: [Key], images: ProcessImages) -> [Key: [Frame]] {
        let symbolicator = Symbolicator()
        var result: [Key: [Frame]] = [:]
        for key in keys where key.isProgramCounter {
            result[key] = symbolicator.symbolicate([key.address], images: images)
        }
        let returns = keys.filter { !$0.isProgramCounter }
        guard !returns.isEmpty else { return result }
        // The first address goes in twice, as the program counter the symbolicator expects first (its segment is
        // dropped below) and as a return address: a zero there would be read as the end of the stack.
        let frames = symbolicator.symbolicate([returns[0].address] + returns.map(\.address), images: images)
        let named = segments(frames)
        if named.count == returns.count + 1 {
            for (key, segment) in zip(returns, named.dropFirst()) { result[key] = segment }
        } else {
            // Not one concrete frame per address: name them one by one instead.
            for key in returns {
                result[key] = segments(symbolicator.symbolicate([key.address, key.address], images: images)).last
            }
        }
        return result
    }

    /// Splits symbolicated frames at each concrete (not inlined) frame: one segment per captured address.
    private static func segments(_ frames: [Frame]) -> [[Frame]] {
        var segments: [[Frame]] = []
        var current: [Frame] = []
        for frame in frames {
            current.append(frame)
            if !frame.inlined {
                segments.append(current)
                current = []
            }
        }
        return segments
    }
}

/// Slots written by concurrent workers, each slot by one worker, read after they all finished.
///
/// Raw memory rather than an array: concurrent writes to different elements of one array would be overlapping
/// accesses to the array as a whole.
private final class ResultSlots<Value>: @unchecked Sendable {
    private let values: UnsafeMutablePointer<Value?>
    private let count: Int

    init(count: Int) {
        self.count = count
        values = .allocate(capacity: max(1, count))
        values.initialize(repeating: nil, count: max(1, count))
    }

    deinit {
        values.deinitialize(count: max(1, count))
        values.deallocate()
    }

    subscript(index: Int) -> Value? {
        get { values[index] }
        set { values[index] = newValue }
    }
}
