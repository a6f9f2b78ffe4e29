// Which phase a thread is in when run loops nest or are pumped by hand: entry pushes, exit pops. The one definition
// of the model: StallwatchCore's `RunLoopNesting` is its Swift face (documented there, with its tests), and the
// agent's C publishes through it on the main loop's hot path, where each run's entry and exit must cost a handful of
// instructions with no call (a Swift mutating method on a struct reached through a pointer costs several times that).
#ifndef SW_RUN_LOOP_NESTING_H
#define SW_RUN_LOOP_NESTING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How many nested loops have their outer state restored exactly; deeper ones restore the deepest recorded.
#define SW_NESTING_RECORDED_DEPTH 16

/// LoopPhase raw values the model produces itself.
enum {
    sw_nesting_phase_entry = 1,
    sw_nesting_phase_outside_loop = 8,
};

/// The model's state, all zero at first (phase `notStarted`, mode 0, outside every loop). A state byte is
/// `mode << 4 | phase`: the low byte of the activity board's word.
typedef struct {
    uint8_t current;
    /// The model's own stack of outer states, for loops entered with sw_nesting_enter (or found by
    /// sw_nesting_resynchronize), and its depth; loops whose caller keeps the outer state leave both alone.
    uint8_t outer[SW_NESTING_RECORDED_DEPTH];
    uint32_t loops;
} sw_nesting;

static inline __attribute__((always_inline)) void sw_nesting_push(sw_nesting *nesting) {
    // Read once: a byte store may alias anything, and would make the compiler load the count again.
    uint32_t loops = nesting->loops;
    if (loops < SW_NESTING_RECORDED_DEPTH) nesting->outer[loops] = nesting->current;
    nesting->loops = loops + 1;
}

static inline __attribute__((always_inline)) uint8_t sw_nesting_restore_outer(sw_nesting *nesting) {
    nesting->loops -= 1;
    uint32_t index = nesting->loops < SW_NESTING_RECORDED_DEPTH ? nesting->loops : SW_NESTING_RECORDED_DEPTH - 1;
    nesting->current = nesting->outer[index];
    return nesting->current;
}

/// The state byte of a loop's entry in `mode`.
static inline __attribute__((always_inline)) uint8_t sw_nesting_entry_state(uint8_t mode) {
    return (uint8_t)((mode & 0xF) << 4 | sw_nesting_phase_entry);
}

/// A loop is entered in `mode`.
static inline __attribute__((always_inline)) uint8_t sw_nesting_enter(sw_nesting *nesting, uint8_t mode) {
    sw_nesting_push(nesting);
    nesting->current = sw_nesting_entry_state(mode);
    return nesting->current;
}

/// The innermost loop returns: back to the state before its entry, or outside every loop after the outermost (or
/// after an exit with no entry on record).
static inline __attribute__((always_inline)) uint8_t sw_nesting_exit(sw_nesting *nesting) {
    if (nesting->loops > 1) return sw_nesting_restore_outer(nesting);
    nesting->loops = 0;
    nesting->current = sw_nesting_phase_outside_loop;
    return nesting->current;
}

/// Undoes the last entry, for a run the loop never entered (its mode had nothing in it).
static inline __attribute__((always_inline)) uint8_t sw_nesting_cancel_entry(sw_nesting *nesting) {
    if (nesting->loops == 0) return nesting->current;
    return sw_nesting_restore_outer(nesting);
}

/// Whether a thread in `state` is outside every loop: before any, or between two (a thread that pumps its loop
/// itself). Phases notStarted (0) and outsideLoop (8) are the only ones with the low three bits clear. The same as
/// "no loop on record": a loop's entry gives phase entry, and its moves the phases in between.
static inline __attribute__((always_inline)) int sw_nesting_is_outside_loops(uint8_t state) {
    return (state & 0x7) == 0;
}

/// A loop is entered (`entry`, from sw_nesting_entry_state) by a caller that keeps the outer state itself: the one
/// returned, handed back to sw_nesting_exit_to or sw_nesting_cancel_entry_to when the loop returns. The agent's
/// CFRunLoopRunSpecific keeps it in its own frame, so the stack of states is the call stack's, exact at any depth,
/// and the model's own stack (`outer`, `loops`) is left alone. The same states as sw_nesting_enter and
/// sw_nesting_exit give; the two may interleave.
static inline __attribute__((always_inline)) uint8_t sw_nesting_enter_keeping_outer(sw_nesting *nesting,
                                                                                    uint8_t entry) {
    uint8_t outer = nesting->current;
    nesting->current = entry;
    return outer;
}

/// The innermost loop, entered from `outer` (sw_nesting_enter_keeping_outer), returns: back to `outer`, or outside
/// every loop if `outer` was.
static inline __attribute__((always_inline)) uint8_t sw_nesting_exit_to(sw_nesting *nesting, uint8_t outer) {
    nesting->current = sw_nesting_is_outside_loops(outer) ? (uint8_t)sw_nesting_phase_outside_loop : outer;
    return nesting->current;
}

/// Undoes an entry from `outer` (sw_nesting_enter_keeping_outer) that the loop never made (its mode had nothing in
/// it): back to `outer` exactly.
static inline __attribute__((always_inline)) uint8_t sw_nesting_cancel_entry_to(sw_nesting *nesting,
                                                                                uint8_t outer) {
    nesting->current = outer;
    return outer;
}

/// The loop moves to `phase` (any activity but entry and exit), in the mode it is in.
static inline __attribute__((always_inline)) uint8_t sw_nesting_move(sw_nesting *nesting, uint8_t phase) {
    nesting->current = (uint8_t)((nesting->current & 0xF0) | (phase & 0xF));
    return nesting->current;
}

/// Whether an activity other than entry and exit needs sw_nesting_resynchronize first: a loop is reporting though no
/// entry was seen.
static inline __attribute__((always_inline)) int sw_nesting_needs_mode(const sw_nesting *nesting) {
    return sw_nesting_is_outside_loops(nesting->current);
}

/// Repairs the stack when the loop reports `mode` as current: if it is not the mode of the loop on record, a loop
/// in `mode` was entered unseen inside it (or, at depth 0, before the observers existed).
static inline void sw_nesting_resynchronize(sw_nesting *nesting, uint8_t mode) {
    if (!sw_nesting_is_outside_loops(nesting->current) && (mode & 0xF) == nesting->current >> 4) return;
    sw_nesting_push(nesting);
    nesting->current = (uint8_t)((mode & 0xF) << 4 | (nesting->current & 0xF));
}

#ifdef __cplusplus
}
#endif

#endif
