// The run-loop nesting model for a caller that keeps the outer state in its own frame: the agent's
// CFRunLoopRunSpecific, whose runs then unwind exactly at any depth with the call stack's own stack of states.
#ifndef SW_NESTED_RUN_H
#define SW_NESTED_RUN_H

#include "sw_run_loop_nesting.h"

/// A loop is entered (`entry`, from sw_nesting_entry_state) by a caller that keeps the state returned, for
/// sw_nesting_exit_to or sw_nesting_cancel_entry_to: the agent's CFRunLoopRunSpecific, exact at any depth.
SW_MODEL_INLINE uint8_t sw_nesting_enter_keeping_outer(sw_nesting *nesting, uint8_t entry) {
    uint8_t outer = nesting->current;
    nesting->current = entry;
    return outer;
}

/// The loop entered from `outer` returns: back to `outer`, or outside every loop if `outer` was.
SW_MODEL_INLINE uint8_t sw_nesting_exit_to(sw_nesting *nesting, uint8_t outer) {
    return nesting->current = sw_phase_is_outside_loops(outer) ? (uint8_t)sw_phase_outside_loop : outer;
}

/// Undoes an entry from `outer` that the loop never made: back to `outer` exactly.
SW_MODEL_INLINE uint8_t sw_nesting_cancel_entry_to(sw_nesting *nesting, uint8_t outer) {
    return nesting->current = outer;
}

#endif
