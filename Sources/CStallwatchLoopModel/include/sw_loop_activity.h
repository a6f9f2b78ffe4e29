// What CoreFoundation reports to the agent's two observers, and what each report moves the loop model to: the one
// table both the main loop's C observers and a loop thread's observers read.
#ifndef SW_LOOP_ACTIVITY_H
#define SW_LOOP_ACTIVITY_H

#include "sw_loop_phase.h"

/// CoreFoundation's CFRunLoopActivity bits (CFRunLoop.h), for C that cannot include CoreFoundation's headers.
enum {
    sw_cf_activity_entry = 1u << 0,
    sw_cf_activity_before_timers = 1u << 1,
    sw_cf_activity_before_sources = 1u << 2,
    sw_cf_activity_before_waiting = 1u << 5,
    sw_cf_activity_after_waiting = 1u << 6,
    sw_cf_activity_exit = 1u << 7,
};

/// What the loop model hears (`RunLoopNesting.Activity`): entry and exit push and pop a loop, the others move the
/// loop on record to their phase. `sleeping` is `beforeWaiting` as the last observer hears it, once every other
/// observer has run.
typedef enum SW_CLOSED_ENUM : uint8_t {
    sw_activity_none SW_SWIFT_NAME(none) = 0,
    sw_activity_entry SW_SWIFT_NAME(entry),
    sw_activity_before_sources SW_SWIFT_NAME(beforeSources),
    sw_activity_before_waiting SW_SWIFT_NAME(beforeWaiting),
    sw_activity_sleeping SW_SWIFT_NAME(sleeping),
    sw_activity_after_waiting SW_SWIFT_NAME(afterWaiting),
    sw_activity_exit SW_SWIFT_NAME(exit),
} sw_loop_activity;

/// The activity an observer reports for CoreFoundation's `cf_activity`: the first observer (ordered first) hears each
/// as it comes, the last (ordered last, given `beforeWaiting` alone) hears the loop go to sleep.
SW_MODEL_INLINE sw_loop_activity sw_activity_observed(unsigned long cf_activity, int last_observer) {
    if (last_observer) return cf_activity == sw_cf_activity_before_waiting ? sw_activity_sleeping : sw_activity_none;
    switch (cf_activity) {
    case sw_cf_activity_entry: return sw_activity_entry;
    case sw_cf_activity_before_sources: return sw_activity_before_sources;
    case sw_cf_activity_before_waiting: return sw_activity_before_waiting;
    case sw_cf_activity_after_waiting: return sw_activity_after_waiting;
    case sw_cf_activity_exit: return sw_activity_exit;
    default: return sw_activity_none;
    }
}

/// The phase an activity other than entry and exit moves the loop to (notStarted for those and for none).
SW_MODEL_INLINE sw_loop_phase sw_activity_phase(sw_loop_activity activity) {
    switch (activity) {
    case sw_activity_before_sources: return sw_phase_before_sources;
    case sw_activity_before_waiting: return sw_phase_before_waiting;
    case sw_activity_sleeping: return sw_phase_sleeping;
    case sw_activity_after_waiting: return sw_phase_after_waiting;
    default: return sw_phase_not_started;
    }
}

/// Whether an observed activity is stamped by the precise clock: all but `beforeSources`, which a loop that never
/// sleeps reports at every iteration, and which reads the coarse one where the board's clock is CLOCK_MONOTONIC.
SW_MODEL_INLINE int sw_activity_is_precise(sw_loop_activity activity) { return activity != sw_activity_before_sources; }

#endif
