// The activity board's layout and its publish path, inline: activity_board.c defines the board around them, and the
// main loop's run hooks (sw_main_loop_publisher.h) publish through them with no call at all. Private to the agent's C.
#ifndef SW_BOARD_INTERNAL_H
#define SW_BOARD_INTERNAL_H

#include "sw_activity_board.h"

#include <stdatomic.h>
#include <time.h>

// Always inlined, in debug builds too: publishing must stay one function whose only calls are its rare paths.
#define SW_INLINE static inline __attribute__((always_inline))

enum {
    // LoopPhase raw values.
    sw_phase_sleeping = 4,
    // LoopPhase.isBusy: entry, beforeSources, beforeWaiting, afterWaiting, mainQueue, outsideLoop, task.
    sw_busy_phases = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9),
    // The packed word, high to low: 56 bits of stamp, 4 of mode, 4 of phase (StallwatchCore's `PackedActivity`
    // reads the low 8). The stamp is the board clock's reading: ticks of the time-stamp counter (wrapping after
    // 2^56, some 300 days at 3 GHz) or CLOCK_MONOTONIC nanoseconds (2.3 years); either is strictly later at every
    // transition of a thread, so the whole word changes at each. sw_board_read turns it into CLOCK_MONOTONIC time.
    sw_low_bits = 8,
};

#define SW_STAMP_MASK ((1ull << 56) - 1)

struct sw_activity_board {
    _Atomic uint64_t word;
    _Atomic int end_probe_armed;
    /// The board clock's full reading at the first transition after the probe was armed; 0 until then.
    _Atomic uint64_t end_probe_stamp;
    /// Which clock the board's stamps come from: the time-stamp counter (1) or CLOCK_MONOTONIC (0).
    int uses_counter;
    int keeps_busy_periods;
    // Written by the loop thread alone: the last stamp on CLOCK_MONOTONIC (each kept later than the one before: the
    // coarse clock may lag the precise one, and repeat) and when the current busy period began (0 while asleep), in
    // the board clock's units.
    uint64_t last_stamp;
    uint64_t busy_since;
    // Written by the loop thread alone, read by the watcher: plain loads and stores, no read-modify-write.
    _Atomic uint64_t longest_busy_period;
    _Atomic uint64_t busy_periods[SW_BOARD_BUSY_BUCKETS];
};

/// Nanoseconds per tick of the time-stamp counter, in 32.32 fixed point: refined by every read of a board, used by
/// the loop thread to turn a busy period into nanoseconds.
extern _Atomic uint64_t sw_board_nanoseconds_per_tick_q32 __attribute__((visibility("hidden")));

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

/// CLOCK_MONOTONIC now (coarse where `precise` is 0), later than the board's earlier stamps. Out of line: the
/// counter is the common case.
__attribute__((noinline, visibility("hidden"))) uint64_t sw_board_monotonic_stamp(sw_activity_board *board, int precise);
/// Records the end probe's time (the first transition after it was armed). Rare, so out of line.
__attribute__((noinline, visibility("hidden"))) void sw_board_record_end_probe(sw_activity_board *board, uint64_t stamp);

/// Rare (once per busy period that ends in sleep), so out of line.
__attribute__((noinline, visibility("hidden"))) void sw_board_count_busy_period(sw_activity_board *board, uint64_t stamp);

/// Publishes `mode_phase` (mode << 4 | phase) at the board clock's time now (on CLOCK_MONOTONIC, the coarse one
/// unless `precise`); returns the new word. `keeps_busy_periods` is the board's (a constant where the caller knows
/// it, which leaves the check out).
SW_INLINE uint64_t sw_board_publish_now(sw_activity_board *board, uint8_t mode_phase, int precise,
                                        int keeps_busy_periods) {
    uint64_t stamp = board->uses_counter ? sw_board_counter() : sw_board_monotonic_stamp(board, precise);
    if (keeps_busy_periods) {
        // A busy period runs from waking (or entering, or coming back from a loop) to going to sleep.
        uint8_t phase = mode_phase & 0xF;
        if (phase == sw_phase_sleeping) {
            sw_board_count_busy_period(board, stamp);
        } else if (board->busy_since == 0 && ((sw_busy_phases >> phase) & 1)) {
            board->busy_since = stamp;
        }
    }
    uint64_t word = stamp << sw_low_bits | mode_phase;
    atomic_store_explicit(&board->word, word, memory_order_relaxed);
    if (atomic_load_explicit(&board->end_probe_armed, memory_order_relaxed)) sw_board_record_end_probe(board, stamp);
    return word;
}

#endif
