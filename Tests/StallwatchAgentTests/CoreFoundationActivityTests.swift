// The loop model's copy of CoreFoundation's activity bits (C that cannot include CoreFoundation's headers reads it) is
// CoreFoundation's own, bit for bit.
import CStallwatchLoopModel
import CoreFoundation
import Foundation
import Testing

@Suite struct CoreFoundationActivityTests {
    static let bits: [(model: Int, coreFoundation: CFRunLoopActivity)] = [
        (Int(sw_cf_activity_entry), .entry),
        (Int(sw_cf_activity_before_timers), .beforeTimers),
        (Int(sw_cf_activity_before_sources), .beforeSources),
        (Int(sw_cf_activity_before_waiting), .beforeWaiting),
        (Int(sw_cf_activity_after_waiting), .afterWaiting),
        (Int(sw_cf_activity_exit), .exit),
    ]

    @Test func everyActivityBitIsCoreFoundations() {
        for (model, coreFoundation) in Self.bits {
            #expect(UInt(model) == coreFoundation.rawValue, "\(coreFoundation)")
        }
    }
}
