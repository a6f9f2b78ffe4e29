// Which phase a thread is in when run loops nest or are pumped by hand: entry pushes, exit pops. StallwatchCore's
// `RunLoopNesting` is its Swift face (documented there, with its tests); the agent's C runs it inline on the main
// loop's hot path, where a run's entry and exit must cost a handful of instructions with no call.
#ifndef SW_RUN_LOOP_NESTING_H
#define SW_RUN_LOOP_NESTING_H

#include "sw_packed_activity.h"

/// How many nested loops have their outer state restored exactly; deeper ones restore the deepest recorded.
#define SW_NESTING_RECORDED_DEPTH 16

/// The model, all zero at first (notStarted, mode 0, outside every loop). States are sw_packed_state bytes. `outer`
/// and `loops` are the stack of loops entered with sw_nesting_enter (or found by sw_nesting_resynchronize); a caller
/// that keeps the outer state itself (sw_nested_run.h) leaves them alone. The two may interleave.
typedef struct {
    uint8_t current;
    uint8_t outer[SW_NESTING_RECORDED_DEPTH];
    uint32_t loops;
} sw_nesting;

SW_MODEL_INLINE void sw_nesting_push(sw_nesting *nesting) {
    uint32_t loops = nesting->loops;  // read once: a byte store may alias anything
    if (loops < SW_NESTING_RECORDED_DEPTH) nesting->outer[loops] = nesting->current;
    nesting->loops = loops + 1;
}
SW_MODEL_INLINE uint8_t sw_nesting_restore_outer(sw_nesting *nesting) {
    nesting->loops -= 1;
    uint32_t index = nesting->loops < SW_NESTING_RECORDED_DEPTH ? nesting->loops : SW_NESTING_RECORDED_DEPTH - 1;
    nesting->current = nesting->outer[index];
    return nesting->current;
}

/// The state of a loop's entry in `mode`.
SW_MODEL_INLINE uint8_t sw_nesting_entry_state(uint8_t mode) { return sw_packed_state(sw_phase_entry, mode); }
/// A loop is entered in `mode`.
SW_MODEL_INLINE uint8_t sw_nesting_enter(sw_nesting *nesting, uint8_t mode) {
    sw_nesting_push(nesting);
    return nesting->current = sw_nesting_entry_state(mode);
}

/// The innermost loop returns: to the state before its entry, or outside every loop after the outermost.
SW_MODEL_INLINE uint8_t sw_nesting_exit(sw_nesting *nesting) {
    if (nesting->loops > 1) return sw_nesting_restore_outer(nesting);
    nesting->loops = 0;
    return nesting->current = sw_phase_outside_loop;
}

/// Undoes the last entry, for a run the loop never entered (its mode had nothing in it).
SW_MODEL_INLINE uint8_t sw_nesting_cancel_entry(sw_nesting *nesting) {
    return nesting->loops == 0 ? nesting->current : sw_nesting_restore_outer(nesting);
}

/// The loop moves to `phase` (any activity but entry and exit), in the mode it is in.
SW_MODEL_INLINE uint8_t sw_nesting_move(sw_nesting *nesting, uint8_t phase) {
    return nesting->current = sw_packed_state_moved(nesting->current, phase);
}

/// Whether a move needs sw_nesting_resynchronize first: a loop reports though no entry was seen.
SW_MODEL_INLINE int sw_nesting_needs_mode(const sw_nesting *nesting) {
    return sw_phase_is_outside_loops(nesting->current);
}

/// Repairs the stack when the loop reports `mode` as current: if it is not the mode of the loop on record, a loop
/// in `mode` was entered unseen inside it (or, at depth 0, before the observers existed).
static inline void sw_nesting_resynchronize(sw_nesting *nesting, uint8_t mode) {
    uint8_t current = nesting->current;
    if (!sw_phase_is_outside_loops(current) && (mode & SW_PACKED_MODE_LIMIT) == sw_packed_state_mode(current)) return;
    sw_nesting_push(nesting);
    nesting->current = sw_packed_state(sw_packed_state_phase(current), mode);
}

#endif
