// The activity board's layout and its publish paths, inline: activity_board.c defines the board around them, and the
// main loop's run hooks (sw_main_loop_publisher.h) publish through them with no call at all. Private to the agent's C.
#ifndef SW_BOARD_INTERNAL_H
#define SW_BOARD_INTERNAL_H

#include "CStallwatchLoopModel.h"
#include "sw_activity_board.h"
#include "sw_agent_internal.h"

#include <stdatomic.h>
#include <time.h>

// The packed word (sw_packed_activity.h) holds the board clock's reading as its stamp: ticks of the time-stamp
// counter (wrapping after 2^56, some 300 days at 3 GHz) or CLOCK_MONOTONIC nanoseconds (2.3 years); either is
// strictly later at every transition of a thread, so the whole word changes at each. sw_board_read turns it into
// CLOCK_MONOTONIC time.

/// Why a transition cannot take the inline path and goes through sw_board_publish_slowly: the bits of a board's
/// `slow_reasons`, all clear in the common case, so that the inline path tests one word for all of them.
enum {
    /// The watcher asked for the precise time of the next transition (the end of a stall). Set by the watcher,
    /// cleared by the transition that records it.
    sw_board_slow_end_probe = 1u << 0,
    /// The board is stamped by CLOCK_MONOTONIC, not the time-stamp counter. Fixed when the board is made.
    sw_board_slow_monotonic_clock = 1u << 1,
    /// No busy period has begun since the board was made: the next transition of a run, which otherwise leaves
    /// busy periods alone (sw_board_publish_inside_busy_period), begins it. Cleared once one has.
    sw_board_slow_no_busy_period_yet = 1u << 2,
    /// The main loop's runs do not publish (not watched, or entry and exit come from observers): a run's
    /// transition goes no further. Only the main loop's board has it; only run transitions heed it.
    sw_board_slow_runs_unpublished = 1u << 3,
    /// The reasons sw_board_publish_now heeds: it tracks busy periods inline, and publishes every transition.
    sw_board_slow_for_any_transition = sw_board_slow_end_probe | sw_board_slow_monotonic_clock,
};

struct sw_activity_board {
    _Atomic uint64_t word;
    /// sw_board_slow_* bits.
    _Atomic uint32_t slow_reasons;
    int keeps_busy_periods;
    /// The board clock's full reading at the first transition after the end probe was armed; 0 until then.
    _Atomic uint64_t end_probe_stamp;
    // Written by the loop thread alone: the last stamp on CLOCK_MONOTONIC (each kept later than the one before: the
    // coarse clock may lag the precise one, and repeat) and when the current busy period began (0 while asleep), in
    // the board clock's units.
    uint64_t last_stamp;
    uint64_t busy_since;
    // Written by the loop thread alone, read by the watcher: plain loads and stores, no read-modify-write.
    _Atomic uint64_t longest_busy_period;
    _Atomic uint64_t busy_periods[SW_HISTOGRAM_BUCKETS];
};

/// Nanoseconds per tick of the time-stamp counter, in 32.32 fixed point: refined by every read of a board, used by
/// the loop thread to turn a busy period into nanoseconds.
extern _Atomic uint64_t sw_board_nanoseconds_per_tick_q32 SW_HIDDEN;

SW_INLINE uint64_t sw_board_counter(void) {
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

SW_INLINE uint64_t sw_board_clock_ns(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/// Makes `board` (zeroed, but for slow reasons it starts with, which it keeps) a board on the counter if `counter`
/// (and the counter is usable), else on CLOCK_MONOTONIC.
SW_HIDDEN void sw_board_initialize(sw_activity_board *board, int keeps_busy_periods, int counter);

/// Rare (once per busy period that ends in sleep), so out of line.
SW_RARE void sw_board_count_busy_period(sw_activity_board *board, uint64_t stamp);

/// A busy period runs from waking (or entering, or coming back from a loop) to going to sleep.
SW_INLINE void sw_board_track_busy_period(sw_activity_board *board, uint8_t mode_phase, uint64_t stamp) {
    uint8_t phase = sw_packed_state_phase(mode_phase);
    if (phase == sw_phase_sleeping) {
        sw_board_count_busy_period(board, stamp);
    } else if (board->busy_since == 0 && sw_phase_is_busy(phase)) {
        board->busy_since = stamp;
    }
}

/// Publishes `mode_phase` whatever the board's slow reasons: every case the inline paths leave out (see
/// sw_board_slow_*). `precise`: on CLOCK_MONOTONIC, the precise clock rather than the coarse one. `from_run`: a run's
/// entry or exit, which heeds sw_board_slow_runs_unpublished (and then publishes nothing, returning 0). Returns the
/// word published.
SW_RARE uint64_t sw_board_publish_slowly(sw_activity_board *board, uint8_t mode_phase, int precise, int from_run);

SW_INLINE uint64_t sw_board_store(sw_activity_board *board, uint64_t stamp, uint8_t mode_phase) {
    uint64_t word = sw_packed_word(stamp, mode_phase);
    atomic_store_explicit(&board->word, word, memory_order_relaxed);
    return word;
}

/// Publishes `mode_phase` (a sw_packed_state) at the board clock's time now (on CLOCK_MONOTONIC, the coarse one
/// unless `precise`); returns the new word. `keeps_busy_periods` is the board's (a constant where the caller knows
/// it, which leaves the check out).
SW_INLINE uint64_t sw_board_publish_now(sw_activity_board *board, uint8_t mode_phase, int precise,
                                        int keeps_busy_periods) {
    if (atomic_load_explicit(&board->slow_reasons, memory_order_relaxed) & sw_board_slow_for_any_transition)
        return sw_board_publish_slowly(board, mode_phase, precise, 0);
    uint64_t stamp = sw_board_counter();
    if (keeps_busy_periods) sw_board_track_busy_period(board, mode_phase, stamp);
    return sw_board_store(board, stamp, mode_phase);
}

/// Publishes a run's entry or exit (`mode_phase`), precisely, with the busy periods left alone: neither begins or
/// ends one. A run's entry and exit come while the thread is busy: the loop sleeps only after `beforeWaiting`, and
/// `afterWaiting` (published by the observers, which track busy periods) always comes before the thread can do
/// anything else; the first transition on a new board goes the slow way, which begins the first period. `reasons`:
/// the board's slow reasons, as the caller read them. Returns the word published (0 if runs do not publish).
SW_INLINE uint64_t sw_board_publish_run_transition(sw_activity_board *board, uint8_t mode_phase, uint32_t reasons) {
    if (reasons != 0) return sw_board_publish_slowly(board, mode_phase, 1, 1);
    return sw_board_store(board, sw_board_counter(), mode_phase);
}

/// sw_board_publish_run_transition with the board's slow reasons read now.
SW_INLINE uint64_t sw_board_publish_inside_busy_period(sw_activity_board *board, uint8_t mode_phase) {
    return sw_board_publish_run_transition(board, mode_phase,
                                           atomic_load_explicit(&board->slow_reasons, memory_order_relaxed));
}

#endif
