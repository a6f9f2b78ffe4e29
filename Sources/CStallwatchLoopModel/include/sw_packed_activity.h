// The word a watched thread publishes at each transition, high to low: 56 bits of stamp, 4 of mode, 4 of phase. The
// agent's C packs it with one store; StallwatchCore's `PackedActivity` reads it through these.
#ifndef SW_PACKED_ACTIVITY_H
#define SW_PACKED_ACTIVITY_H

#include "sw_loop_phase.h"

/// The widths of the word's fields (constants Swift imports). The low byte (mode and phase) is a state: what the
/// nesting model keeps. SW_PACKED_MODE_LIMIT: the largest mode index a state holds (1 to 15; 0 is none or unknown).
enum {
    SW_PACKED_PHASE_BITS = 4,
    SW_PACKED_MODE_BITS = 4,
    SW_PACKED_STATE_BITS = SW_PACKED_PHASE_BITS + SW_PACKED_MODE_BITS,
    SW_PACKED_STAMP_BITS = 64 - SW_PACKED_STATE_BITS,
    SW_PACKED_MODE_LIMIT = (1 << SW_PACKED_MODE_BITS) - 1,
};
/// The packed stamp's bits, once shifted down.
#define SW_PACKED_STAMP_MASK ((1ull << SW_PACKED_STAMP_BITS) - 1)

_Static_assert(SW_PACKED_STAMP_BITS == 56 && SW_PACKED_STATE_BITS == 8, "the 56/4/4 layout");

/// The state byte of `phase` in `mode` (the mode's low four bits).
SW_MODEL_INLINE uint8_t sw_packed_state(uint8_t phase, uint8_t mode) {
    return (uint8_t)((mode & SW_PACKED_MODE_LIMIT) << SW_PACKED_PHASE_BITS |
                     (phase & ((1u << SW_PACKED_PHASE_BITS) - 1)));
}

/// A state's phase (a sw_loop_phase's number, or an unknown one from a damaged word).
SW_MODEL_INLINE uint8_t sw_packed_state_phase(uint8_t state) { return state & ((1u << SW_PACKED_PHASE_BITS) - 1); }

/// A state's mode.
SW_MODEL_INLINE uint8_t sw_packed_state_mode(uint8_t state) { return state >> SW_PACKED_PHASE_BITS; }

/// A state with its phase replaced, its mode kept.
SW_MODEL_INLINE uint8_t sw_packed_state_moved(uint8_t state, uint8_t phase) {
    return sw_packed_state(phase, sw_packed_state_mode(state));
}

/// The word of `state` stamped `stamp` (its low 56 bits).
SW_MODEL_INLINE uint64_t sw_packed_word(uint64_t stamp, uint8_t state) { return stamp << SW_PACKED_STATE_BITS | state; }

/// A word's state (its low byte) and its stamp (the 56 bits above).
SW_MODEL_INLINE uint8_t sw_packed_word_state(uint64_t word) { return (uint8_t)word; }
SW_MODEL_INLINE uint64_t sw_packed_word_stamp(uint64_t word) { return word >> SW_PACKED_STATE_BITS; }

#endif
