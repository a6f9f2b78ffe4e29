// The run-loop activity board (see sw_activity_board.h for why it is C). The layout of the packed word and the
// histogram's buckets are StallwatchCore's (`PackedActivity`, `LatencyHistogram`); StallwatchAgentTests checks that
// both sides agree, and that publishing calls nothing but the clock.
#include "sw_activity_board.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

// Always inlined, in debug builds too: publishing must stay one function with no call but the clock's.
#define SW_INLINE static inline __attribute__((always_inline))

enum {
    // LoopPhase raw values.
    phase_sleeping = 4,
    // LoopPhase.isBusy: entry, beforeSources, beforeWaiting, afterWaiting, mainQueue, outsideLoop, task.
    busy_phases = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9),
    // PackedActivity: 40 bits of microseconds, 16 of sequence, 4 of mode, 4 of phase, high to low.
    phase_bits = 4,
    mode_bits = 4,
    sequence_bits = 16,
    timestamp_bits = 40,
    // LatencyHistogram: 8 sub-buckets per power of two of microseconds.
    sub_bucket_bits = 3,
    sub_buckets = 1 << sub_bucket_bits,
};

struct sw_activity_board {
    _Atomic uint64_t word;
    _Atomic int end_probe_armed;
    _Atomic uint64_t end_probe_time;
    // Written by the loop thread alone: its running sequence, the last stamp (kept monotonic when the coarse clock
    // lags the precise one) and when the current busy period began (0 while asleep).
    uint64_t sequence;
    uint64_t last_stamp;
    uint64_t busy_since;
    int keeps_busy_periods;
    // Written by the loop thread alone, read by the watcher: plain loads and stores, no read-modify-write.
    _Atomic uint64_t longest_busy_period;
    _Atomic uint64_t busy_periods[SW_BOARD_BUSY_BUCKETS];
};

sw_activity_board *sw_board_create(int keeps_busy_periods) {
    sw_activity_board *board = calloc(1, sizeof(*board));
    if (board != NULL) board->keeps_busy_periods = keeps_busy_periods != 0;
    return board;
}

void sw_board_destroy(sw_activity_board *board) { free(board); }

SW_INLINE uint64_t read_clock(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

SW_INLINE int busy_bucket(uint64_t nanoseconds) {
    uint64_t micros = nanoseconds / 1000;
    if (micros < sub_buckets) return (int)micros;
    int magnitude = 63 - __builtin_clzll(micros);
    int shift = magnitude - sub_bucket_bits;
    int sub = (int)((micros >> shift) & (sub_buckets - 1));
    int index = (shift + 1) * sub_buckets + sub;
    return index < SW_BOARD_BUSY_BUCKETS - 1 ? index : SW_BOARD_BUSY_BUCKETS - 1;
}

int sw_board_busy_bucket(uint64_t nanoseconds) { return busy_bucket(nanoseconds); }

SW_INLINE uint64_t pack(uint64_t sequence, uint8_t phase, uint64_t timestamp, uint8_t mode) {
    uint64_t micros = (timestamp / 1000) & ((1ull << timestamp_bits) - 1);
    return micros << (sequence_bits + mode_bits + phase_bits) |
           (sequence & ((1ull << sequence_bits) - 1)) << (mode_bits + phase_bits) | (uint64_t)(mode & 0xF) << phase_bits |
           (uint64_t)(phase & 0xF);
}

SW_INLINE void count_busy_period(sw_activity_board *board, uint64_t period) {
    _Atomic uint64_t *bucket = &board->busy_periods[busy_bucket(period)];
    atomic_store_explicit(bucket, atomic_load_explicit(bucket, memory_order_relaxed) + 1, memory_order_relaxed);
    if (period > atomic_load_explicit(&board->longest_busy_period, memory_order_relaxed))
        atomic_store_explicit(&board->longest_busy_period, period, memory_order_relaxed);
}

void sw_board_publish(sw_activity_board *board, uint8_t phase, uint8_t mode, int precise) {
    uint64_t now = read_clock(precise ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE);
    uint64_t stamp = now > board->last_stamp ? now : board->last_stamp;
    board->last_stamp = stamp;
    // A busy period runs from waking (or entering, or coming back from a loop) to going to sleep; both ends read the
    // precise clock.
    if (board->keeps_busy_periods) {
        if (phase == phase_sleeping) {
            uint64_t since = board->busy_since;
            if (since != 0 && now > since) count_busy_period(board, now - since);
            board->busy_since = 0;
        } else if (precise && ((busy_phases >> phase) & 1) && board->busy_since == 0) {
            board->busy_since = now;
        }
    }
    board->sequence += 1;
    atomic_store_explicit(&board->word, pack(board->sequence, phase, stamp, mode), memory_order_relaxed);
    if (atomic_load_explicit(&board->end_probe_armed, memory_order_relaxed)) {
        atomic_store_explicit(&board->end_probe_armed, 0, memory_order_relaxed);
        atomic_store_explicit(&board->end_probe_time, precise ? now : read_clock(CLOCK_MONOTONIC),
                              memory_order_release);
    }
}

uint64_t sw_board_sequence(const sw_activity_board *board) { return board->sequence; }

uint64_t sw_board_read(const sw_activity_board *board) {
    return atomic_load_explicit(&board->word, memory_order_relaxed);
}

void sw_board_arm_end_probe(sw_activity_board *board) {
    atomic_store_explicit(&board->end_probe_time, 0, memory_order_relaxed);
    atomic_store_explicit(&board->end_probe_armed, 1, memory_order_release);
}

uint64_t sw_board_end_probe(const sw_activity_board *board) {
    return atomic_load_explicit(&board->end_probe_time, memory_order_acquire);
}

uint64_t sw_board_busy_periods(const sw_activity_board *board, int index) {
    if (!board->keeps_busy_periods || index < 0 || index >= SW_BOARD_BUSY_BUCKETS) return 0;
    return atomic_load_explicit(&board->busy_periods[index], memory_order_relaxed);
}

uint64_t sw_board_longest_busy_period(const sw_activity_board *board) {
    return atomic_load_explicit(&board->longest_busy_period, memory_order_relaxed);
}
