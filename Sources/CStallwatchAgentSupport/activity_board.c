// The run-loop activity board (see sw_activity_board.h for why it is C, sw_board_internal.h for its layout and the
// publish path). The packed word's layout and the histogram's buckets are the loop model's (CStallwatchLoopModel),
// which StallwatchCore reads too; StallwatchAgentTests checks that publishing calls nothing.
//
// The board clock. A transition's time is read on the watched thread at every transition, so it is the time-stamp
// counter where the kernel itself keeps time by it (its clocksource is `tsc`: the counter runs at a constant rate, on
// every CPU in step): one instruction, where CLOCK_MONOTONIC through the vDSO is a few dozen. The readers, on the
// watcher's side, turn a counter stamp into CLOCK_MONOTONIC nanoseconds from a fresh pair of readings of both and
// the rate between the first pair (taken when the first board was made) and that one, so the conversion's error is
// the pair's jitter (tens of nanoseconds) scaled by how far back the stamp lies, never more. Elsewhere (another
// clocksource, another architecture) the board stamps with CLOCK_MONOTONIC as before.
#define _GNU_SOURCE
#include "sw_board_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Atomic uint64_t sw_board_nanoseconds_per_tick_q32;

/// The two clocks read together: `ticks` the counter halfway through the read of `nanoseconds`.
typedef struct {
    uint64_t ticks;
    uint64_t nanoseconds;
} clock_pair;

static struct {
    int counter_usable;
    clock_pair origin;
} board_clock;

static pthread_once_t board_clock_once = PTHREAD_ONCE_INIT;

/// The tightest of a few readings: a pair interrupted between its counter reads is discarded.
static clock_pair read_pair(void) {
    clock_pair best = {0, 0};
    uint64_t best_spread = UINT64_MAX;
    for (int attempt = 0; attempt < 3; attempt++) {
        uint64_t before = sw_board_counter();
        uint64_t nanoseconds = sw_board_clock_ns(CLOCK_MONOTONIC);
        uint64_t after = sw_board_counter();
        if (after - before < best_spread) {
            best_spread = after - before;
            best = (clock_pair){before + (after - before) / 2, nanoseconds};
        }
    }
    return best;
}

static int kernel_keeps_time_by_counter(void) {
#if defined(__x86_64__)
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char name[16] = {0};
    ssize_t length = read(fd, name, sizeof(name) - 1);
    close(fd);
    return length >= 3 && strncmp(name, "tsc", 3) == 0 && (length == 3 || name[3] == '\n');
#else
    return 0;
#endif
}

static uint64_t rate_q32(clock_pair from, clock_pair to) {
    if (to.ticks <= from.ticks || to.nanoseconds <= from.nanoseconds) return 0;
    return (uint64_t)(((unsigned __int128)(to.nanoseconds - from.nanoseconds) << 32) / (to.ticks - from.ticks));
}

static void start_board_clock(void) {
    if (!kernel_keeps_time_by_counter()) return;
    clock_pair origin = read_pair();
    // A first rate for busy periods, over 100 µs; every read refines it over a longer span.
    clock_pair later;
    do later = read_pair();
    while (later.nanoseconds < origin.nanoseconds + 100000);
    uint64_t rate = rate_q32(origin, later);
    if (rate == 0) return;
    board_clock.origin = origin;
    atomic_store_explicit(&sw_board_nanoseconds_per_tick_q32, rate, memory_order_relaxed);
    board_clock.counter_usable = 1;
}

int sw_board_clock_uses_counter(void) {
    pthread_once(&board_clock_once, start_board_clock);
    return board_clock.counter_usable;
}

void sw_board_initialize(sw_activity_board *board, int keeps_busy_periods, int counter) {
    board->keeps_busy_periods = keeps_busy_periods != 0;
    uint32_t reasons = keeps_busy_periods ? sw_board_slow_no_busy_period_yet : 0;
    if (!(counter != 0 && sw_board_clock_uses_counter())) reasons |= sw_board_slow_monotonic_clock;
    // Added to any the board already has: the main loop's has sw_board_slow_runs_unpublished from the start.
    atomic_fetch_or_explicit(&board->slow_reasons, reasons, memory_order_release);
}

sw_activity_board *sw_board_create_on_clock(int keeps_busy_periods, int counter) {
    sw_activity_board *board = calloc(1, sizeof(*board));
    if (board == NULL) return NULL;
    sw_board_initialize(board, keeps_busy_periods, counter);
    return board;
}

sw_activity_board *sw_board_create(int keeps_busy_periods) {
    return sw_board_create_on_clock(keeps_busy_periods, sw_board_clock_uses_counter());
}

void sw_board_destroy(sw_activity_board *board) { free(board); }

static int uses_counter(const sw_activity_board *board) {
    return !(atomic_load_explicit(&board->slow_reasons, memory_order_relaxed) & sw_board_slow_monotonic_clock);
}

int sw_board_uses_counter(const sw_activity_board *board) { return uses_counter(board); }

SW_INLINE uint64_t ticks_to_nanoseconds(uint64_t ticks) {
    uint64_t rate = atomic_load_explicit(&sw_board_nanoseconds_per_tick_q32, memory_order_relaxed);
    return (uint64_t)(((unsigned __int128)ticks * rate) >> 32);
}

void sw_board_count_busy_period(sw_activity_board *board, uint64_t stamp) {
    uint64_t since = board->busy_since;
    board->busy_since = 0;
    if (since == 0 || stamp <= since) return;
    uint64_t period = uses_counter(board) ? ticks_to_nanoseconds(stamp - since) : stamp - since;
    _Atomic uint64_t *bucket = &board->busy_periods[sw_histogram_bucket(period)];
    atomic_store_explicit(bucket, atomic_load_explicit(bucket, memory_order_relaxed) + 1, memory_order_relaxed);
    if (period > atomic_load_explicit(&board->longest_busy_period, memory_order_relaxed))
        atomic_store_explicit(&board->longest_busy_period, period, memory_order_relaxed);
}

int sw_board_busy_bucket(uint64_t nanoseconds) { return sw_histogram_bucket(nanoseconds); }

/// CLOCK_MONOTONIC now (coarse where `precise` is 0), later than the board's earlier stamps.
static uint64_t monotonic_stamp(sw_activity_board *board, int precise) {
    uint64_t stamp = sw_board_clock_ns(precise ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE);
    if (stamp <= board->last_stamp) stamp = board->last_stamp + 1;
    board->last_stamp = stamp;
    return stamp;
}

uint64_t sw_board_publish_slowly(sw_activity_board *board, uint8_t mode_phase, int precise, int from_run) {
    uint32_t reasons = atomic_load_explicit(&board->slow_reasons, memory_order_acquire);
    if (from_run && (reasons & sw_board_slow_runs_unpublished)) return 0;
    uint64_t stamp = reasons & sw_board_slow_monotonic_clock ? monotonic_stamp(board, precise) : sw_board_counter();
    if (board->keeps_busy_periods) {
        sw_board_track_busy_period(board, mode_phase, stamp);
        if ((reasons & sw_board_slow_no_busy_period_yet) && board->busy_since != 0)
            atomic_fetch_and_explicit(&board->slow_reasons, ~(uint32_t)sw_board_slow_no_busy_period_yet,
                                      memory_order_relaxed);
    }
    uint64_t word = sw_board_store(board, stamp, mode_phase);
    if (reasons & sw_board_slow_end_probe) {
        atomic_fetch_and_explicit(&board->slow_reasons, ~(uint32_t)sw_board_slow_end_probe, memory_order_relaxed);
        // Exact on either clock: the probe is the end of a stall.
        uint64_t exact = reasons & sw_board_slow_monotonic_clock ? sw_board_clock_ns(CLOCK_MONOTONIC) : stamp;
        atomic_store_explicit(&board->end_probe_stamp, exact, memory_order_release);
    }
    return word;
}

void sw_board_publish(sw_activity_board *board, uint8_t phase, uint8_t mode, int precise) {
    sw_board_publish_now(board, sw_packed_state(phase, mode), precise, board->keeps_busy_periods);
}

uint64_t sw_board_unwrap_stamp(uint64_t packed, uint64_t now) {
    uint64_t age = (now - packed) & SW_PACKED_STAMP_MASK;
    uint64_t ahead = (packed - now) & SW_PACKED_STAMP_MASK;
    // Half the range either way: a stamp ahead of now is at most a scheduling delay ahead (published between the
    // reader's clock read and its load of the word).
    return ahead < age ? now + ahead : (now >= age ? now - age : 0);
}

/// A full counter stamp in CLOCK_MONOTONIC nanoseconds, by the pair `now` read just before (which also refines the
/// rate busy periods are converted with).
static uint64_t counter_stamp_to_nanoseconds(uint64_t stamp, clock_pair now) {
    uint64_t rate = rate_q32(board_clock.origin, now);
    if (rate != 0) atomic_store_explicit(&sw_board_nanoseconds_per_tick_q32, rate, memory_order_relaxed);
    if (stamp >= now.ticks) return now.nanoseconds + ticks_to_nanoseconds(stamp - now.ticks);
    uint64_t back = ticks_to_nanoseconds(now.ticks - stamp);
    return now.nanoseconds > back ? now.nanoseconds - back : 0;
}

uint64_t sw_board_read(const sw_activity_board *board, uint64_t *nanoseconds) {
    uint64_t word = atomic_load_explicit(&board->word, memory_order_relaxed);
    if (nanoseconds == NULL) return word;
    if (word == 0) {
        *nanoseconds = 0;
        return 0;
    }
    uint64_t packed = sw_packed_word_stamp(word);
    if (!uses_counter(board)) {
        *nanoseconds = sw_board_unwrap_stamp(packed, sw_board_clock_ns(CLOCK_MONOTONIC));
        return word;
    }
    // One pair of clock readings both recovers the stamp's full bits and converts it.
    clock_pair now = read_pair();
    *nanoseconds = counter_stamp_to_nanoseconds(sw_board_unwrap_stamp(packed, now.ticks), now);
    return word;
}

void sw_board_arm_end_probe(sw_activity_board *board) {
    atomic_store_explicit(&board->end_probe_stamp, 0, memory_order_relaxed);
    atomic_fetch_or_explicit(&board->slow_reasons, sw_board_slow_end_probe, memory_order_release);
}

uint64_t sw_board_end_probe(const sw_activity_board *board) {
    uint64_t stamp = atomic_load_explicit(&board->end_probe_stamp, memory_order_acquire);
    if (stamp == 0 || !uses_counter(board)) return stamp;
    return counter_stamp_to_nanoseconds(stamp, read_pair());
}

uint64_t sw_board_busy_periods(const sw_activity_board *board, int index) {
    if (!board->keeps_busy_periods || index < 0 || index >= SW_HISTOGRAM_BUCKETS) return 0;
    return atomic_load_explicit(&board->busy_periods[index], memory_order_relaxed);
}

uint64_t sw_board_longest_busy_period(const sw_activity_board *board) {
    return atomic_load_explicit(&board->longest_busy_period, memory_order_relaxed);
}
