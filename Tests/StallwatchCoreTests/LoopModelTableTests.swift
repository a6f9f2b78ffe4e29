// The Swift view of the C loop model (CStallwatchLoopModel), one table per shared definition: each value Swift reads
// is the C definition's, and the rules agree value by value.
import CStallwatchLoopModel
import Testing

@testable import StallwatchCore

@Suite struct LoopModelTableTests {
    /// Every phase: its Swift case, the C constant (`sw_phase_*`, which Swift imports under its Swift name), and
    /// whether it is busy (the rule `isBusy` documents).
    static let phases: [(phase: LoopPhase, model: sw_loop_phase, busy: Bool)] = [
        (.notStarted, sw_loop_phase.notStarted, false),
        (.entry, sw_loop_phase.entry, true),
        (.beforeSources, sw_loop_phase.beforeSources, true),
        (.beforeWaiting, sw_loop_phase.beforeWaiting, true),
        (.sleeping, sw_loop_phase.sleeping, false),
        (.afterWaiting, sw_loop_phase.afterWaiting, true),
        (.exit, sw_loop_phase.exit, false),
        (.mainQueue, sw_loop_phase.mainQueue, true),
        (.outsideLoop, sw_loop_phase.outsideLoop, true),
        (.task, sw_loop_phase.task, true),
    ]

    @Test func everyPhaseIsTheCModelsPhaseOfItsName() {
        #expect(Self.phases.count == LoopPhase.allCases.count)
        #expect(LoopPhase.allCases.count == Int(SW_PHASE_COUNT))
        for (phase, model, _) in Self.phases {
            #expect(phase.rawValue == model.rawValue, "\(phase)")
            #expect(LoopPhase(rawValue: model.rawValue) == phase, "\(phase)")
        }
        #expect(Set(LoopPhase.allCases.map(\.rawValue)).count == LoopPhase.allCases.count, "distinct numbers")
        #expect(LoopPhase(rawValue: UInt8(SW_PHASE_COUNT)) == nil)
        #expect(LoopPhase(rawValue: 0xF) == nil)
    }

    @Test func theBusyPhasesAreTheCMasksPhases() {
        for (phase, model, busy) in Self.phases {
            #expect(phase.isBusy == busy, "\(phase)")
            #expect((sw_phase_is_busy(model.rawValue) != 0) == busy, "\(phase)")
        }
    }

    /// Only the phases outside every loop have the low bits clear, whatever the mode: the nesting model's one test.
    @Test func theOutsideLoopRuleHoldsInEveryMode() {
        for (phase, model, _) in Self.phases {
            let outside = phase == .notStarted || phase == .outsideLoop
            for mode in UInt8(0)...UInt8(SW_PACKED_MODE_LIMIT) {
                #expect((sw_phase_is_outside_loops(sw_packed_state(model.rawValue, mode)) != 0) == outside, "\(phase)")
            }
        }
    }

    @Test func thePackedWordIsStampModeAndPhaseInFiftySixFourAndFourBits() {
        #expect(SW_PACKED_STAMP_BITS == 56 && SW_PACKED_MODE_BITS == 4 && SW_PACKED_PHASE_BITS == 4)
        #expect(Int(PackedActivity.modeLimit) == Int(SW_PACKED_MODE_LIMIT))
        #expect(PackedActivity.modeLimit == 15)
        let stamp: UInt64 = 0x00AB_CDEF_0123_4567
        for (phase, model, _) in Self.phases {
            for mode in UInt8(0)...PackedActivity.modeLimit {
                let state = sw_packed_state(model.rawValue, mode)
                #expect(PackedActivity.pack(phase: phase, mode: mode) == UInt64(state))
                let word = sw_packed_word(stamp, state)
                #expect(word == stamp << 8 | UInt64(mode) << 4 | UInt64(model.rawValue))
                #expect(sw_packed_word_stamp(word) == stamp)
                let snapshot = PackedActivity.unpack(word, timestamp: 1)
                #expect(snapshot.phase == phase && snapshot.mode == mode)
            }
        }
        #expect(sw_packed_word_stamp(sw_packed_word(UInt64.max, 0)) == (1 << 56) - 1, "the stamp's top bits drop")
    }

    /// The C bucket of every bucket's first and last duration is that bucket: the Swift bounds are the C rule's.
    @Test func everyBucketsBoundsAreInTheCModelsBucket() {
        #expect(LatencyHistogram.bucketCount == Int(SW_HISTOGRAM_BUCKETS))
        #expect(LatencyHistogram.subBuckets == Int(SW_HISTOGRAM_SUB_BUCKETS))
        for index in 0..<LatencyHistogram.bucketCount {
            let lower = LatencyHistogram.lowerBound(ofBucket: index)
            #expect(Int(sw_histogram_bucket(lower)) == index, "bucket \(index) starts at \(lower)")
            #expect(LatencyHistogram.index(forNanoseconds: lower) == index)
            if index + 1 < LatencyHistogram.bucketCount {
                let upper = LatencyHistogram.upperBound(ofBucket: index)
                #expect(Int(sw_histogram_bucket(upper)) == index, "bucket \(index) ends at \(upper)")
            }
        }
        #expect(Int(sw_histogram_bucket(UInt64.max)) == LatencyHistogram.bucketCount - 1)
    }

    @Test func theInProcessFrameCapIsTheCCapturesCap() {
        #expect(WatchSettings.inProcessFrameLimit == Int(SW_IN_PROCESS_MAX_FRAMES))
        #expect(WatchSettings.inProcessFrameLimit == 512)
        var settings = WatchSettings()
        settings.maxFrames = WatchSettings.maxFramesRange.upperBound
        #expect(settings.inProcessMaxFrames == 512)
        settings.maxFrames = 100
        #expect(settings.inProcessMaxFrames == 100)
    }

    /// Frame shapes (frame pointer, stack pointer, CFA) and whether each holds a Swift async frame record.
    static let frames: [(fp: UInt64, sp: UInt64, cfa: UInt64, record: Bool)] = [
        (0x7000_0FF0, 0x7000_0F00, 0x7000_1000, true),  // the frame pointer 16 below the CFA, the slot in the frame
        (0x7000_0FF0, 0x7000_0FE8, 0x7000_1000, true),  // the slot is the frame's lowest word
        (0x7000_0FF0, 0x7000_0FF0, 0x7000_1000, false),  // the slot would lie below the frame
        (0x7000_0FE0, 0x7000_0F00, 0x7000_1000, false),  // a frame pointer elsewhere: an ordinary frame
        (0x7000_0FF0, 0x7000_0F00, 0, false),  // the walk ended: no CFA
        (0x8, 0x0, 0x18, true),  // the smallest CFA with a record
        (0x0, 0x0, 0x10, false),  // below it
    ]

    @Test func anAsyncFrameRecordIsKnownByItsShape() {
        for frame in Self.frames {
            #expect(
                (sw_has_async_frame_record(frame.fp, frame.sp, frame.cfa) != 0) == frame.record,
                "fp \(frame.fp) sp \(frame.sp) cfa \(frame.cfa)")
        }
        #expect(sw_async_context_slot(0x7000_0FF0) == 0x7000_0FE8)
    }

    /// What each of CoreFoundation's activities moves the model to, as the first and the last observer hear it.
    static let activities: [(cf: UInt, first: RunLoopNesting.Activity?, last: RunLoopNesting.Activity?)] = [
        (1 << 0, .entry, nil),
        (1 << 1, nil, nil),  // beforeTimers: not followed
        (1 << 2, .beforeSources, nil),
        (1 << 5, .beforeWaiting, .sleeping),
        (1 << 6, .afterWaiting, nil),
        (1 << 7, .exit, nil),
    ]

    @Test func eachObservedActivityMovesTheModelAsTheCTableSays() {
        for (cf, first, last) in Self.activities {
            #expect(RunLoopNesting.Activity(coreFoundation: cf, lastObserver: false) == first, "\(cf)")
            #expect(RunLoopNesting.Activity(coreFoundation: cf, lastObserver: true) == last, "\(cf)")
        }
        let moves: [(RunLoopNesting.Activity, LoopPhase)] = [
            (.beforeSources, .beforeSources), (.beforeWaiting, .beforeWaiting), (.sleeping, .sleeping),
            (.afterWaiting, .afterWaiting),
        ]
        for (activity, phase) in moves {
            var nesting = RunLoopNesting()
            nesting.apply(.entry, mode: 3)
            #expect(nesting.apply(activity) == .init(phase: phase, mode: 3), "\(activity)")
            #expect(activity.isPrecise == (activity != .beforeSources))
        }
    }
}
