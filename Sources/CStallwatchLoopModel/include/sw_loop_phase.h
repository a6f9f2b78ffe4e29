// The phases a watched loop moves through, their numbers and which count as busy: defined here once, read by
// StallwatchCore's `LoopPhase` (which maps its cases to these by name) and by the agent's C, which publishes them.
#ifndef SW_LOOP_PHASE_H
#define SW_LOOP_PHASE_H

#include <stdint.h>

// A C enum Swift imports as a closed Swift enum with these names, as NS_CLOSED_ENUM does on Darwin.
#define SW_CLOSED_ENUM __attribute__((enum_extensibility(closed)))
#define SW_SWIFT_NAME(name) __attribute__((swift_name(#name)))
// Always inlined, in debug builds too: the agent's publishing paths must stay free of calls.
#define SW_MODEL_INLINE static inline __attribute__((always_inline))

/// A loop's phase, in the low four bits of a published state (see sw_packed_activity.h). `LoopPhase` documents each.
typedef enum SW_CLOSED_ENUM : uint8_t {
    sw_phase_not_started SW_SWIFT_NAME(notStarted) = 0,
    sw_phase_entry SW_SWIFT_NAME(entry) = 1,
    sw_phase_before_sources SW_SWIFT_NAME(beforeSources) = 2,
    sw_phase_before_waiting SW_SWIFT_NAME(beforeWaiting) = 3,
    sw_phase_sleeping SW_SWIFT_NAME(sleeping) = 4,
    sw_phase_after_waiting SW_SWIFT_NAME(afterWaiting) = 5,
    sw_phase_exit SW_SWIFT_NAME(exit) = 6,
    sw_phase_main_queue SW_SWIFT_NAME(mainQueue) = 7,
    sw_phase_outside_loop SW_SWIFT_NAME(outsideLoop) = 8,
    sw_phase_task SW_SWIFT_NAME(task) = 9,
} sw_loop_phase;

/// How many phases there are: they are numbered from 0 up, with no gap.
enum { SW_PHASE_COUNT = sw_phase_task + 1 };

/// Whether `value` is a phase's number (Swift imports a C enum's numbers unchecked: it asks here).
SW_MODEL_INLINE int sw_phase_is_defined(uint8_t value) { return value < SW_PHASE_COUNT; }

/// The phases in which a loop that does not move counts toward a stall (`LoopPhase.isBusy`), one bit each.
#define SW_BUSY_PHASES                                                                                                 \
    (1u << sw_phase_entry | 1u << sw_phase_before_sources | 1u << sw_phase_before_waiting |                            \
     1u << sw_phase_after_waiting | 1u << sw_phase_main_queue | 1u << sw_phase_outside_loop | 1u << sw_phase_task)

/// Whether `phase` (any number below 16) is busy.
SW_MODEL_INLINE int sw_phase_is_busy(uint8_t phase) { return (SW_BUSY_PHASES >> (phase & 0xF)) & 1; }

/// The low bits of a phase that are clear only for the phases outside every loop: notStarted (before any) and
/// outsideLoop (between two, on a thread that pumps its loop itself). One test of a state byte, mode and all.
#define SW_PHASE_INSIDE_LOOP_BITS 0x7u

_Static_assert((sw_phase_not_started & SW_PHASE_INSIDE_LOOP_BITS) == 0, "notStarted is outside every loop");
_Static_assert((sw_phase_outside_loop & SW_PHASE_INSIDE_LOOP_BITS) == 0, "outsideLoop is outside every loop");
#define SW_INSIDE_A_LOOP(phase) _Static_assert(((phase)&SW_PHASE_INSIDE_LOOP_BITS) != 0, #phase " is in a loop")
SW_INSIDE_A_LOOP(sw_phase_entry);
SW_INSIDE_A_LOOP(sw_phase_before_sources);
SW_INSIDE_A_LOOP(sw_phase_before_waiting);
SW_INSIDE_A_LOOP(sw_phase_sleeping);
SW_INSIDE_A_LOOP(sw_phase_after_waiting);
SW_INSIDE_A_LOOP(sw_phase_exit);
SW_INSIDE_A_LOOP(sw_phase_main_queue);
SW_INSIDE_A_LOOP(sw_phase_task);
#undef SW_INSIDE_A_LOOP
_Static_assert(SW_PHASE_COUNT <= 16, "a phase fits its four bits");

/// Whether a thread in `state` (a state byte, see sw_packed_activity.h) is outside every loop.
SW_MODEL_INLINE int sw_phase_is_outside_loops(uint8_t state) { return (state & SW_PHASE_INSIDE_LOOP_BITS) == 0; }

#endif
