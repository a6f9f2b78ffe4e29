// The run-loop activity board: where a watched loop thread publishes its transitions and the watcher reads them.
// In C so that publishing, which runs on the watched thread at every observed transition, is a fixed handful of
// instructions in every build: no Swift runtime call (exclusivity checks, lazy-global checks, retains) can appear
// on it, in a debug build as in a release one, and a test can check its machine code for calls.
#ifndef SW_ACTIVITY_BOARD_H
#define SW_ACTIVITY_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Buckets of the busy-period histogram: StallwatchCore's `LatencyHistogram.bucketCount`.
#define SW_BOARD_BUSY_BUCKETS 256

typedef struct sw_activity_board sw_activity_board;

/// A new board (freed with sw_board_destroy once nothing publishes to it or reads it); NULL if out of memory.
/// `keeps_busy_periods`: whether publishing also fills the busy-period histogram (the main loop's board).
sw_activity_board *sw_board_create(int keeps_busy_periods);
/// Frees a board nobody publishes to or reads any more.
void sw_board_destroy(sw_activity_board *board);

/// Publishes a transition to `phase` (a `LoopPhase` raw value) in the run-loop mode `mode` (0 for none): one clock
/// read (CLOCK_MONOTONIC if `precise`, else CLOCK_MONOTONIC_COARSE) and one relaxed store of the packed word
/// (StallwatchCore's `PackedActivity` layout). The watched loop's own thread only.
void sw_board_publish(sw_activity_board *board, uint8_t phase, uint8_t mode, int precise);

/// How many transitions the board has published. The loop thread only.
uint64_t sw_board_sequence(const sw_activity_board *board);
/// The latest packed word (0 before the first transition). Any thread.
uint64_t sw_board_read(const sw_activity_board *board);
/// Asks the loop thread to record the precise time of its next transition. Any thread.
void sw_board_arm_end_probe(sw_activity_board *board);
/// The time the end probe recorded, or 0 if the loop has not moved since it was armed. Any thread.
uint64_t sw_board_end_probe(const sw_activity_board *board);
/// The busy periods counted in histogram bucket `index` (0 on a board that keeps none, or out of range).
uint64_t sw_board_busy_periods(const sw_activity_board *board, int index);
/// The longest busy period so far, exactly, in nanoseconds.
uint64_t sw_board_longest_busy_period(const sw_activity_board *board);
/// The histogram bucket of a busy period of `nanoseconds` (StallwatchCore's `LatencyHistogram.index`), for tests.
int sw_board_busy_bucket(uint64_t nanoseconds);

#ifdef __cplusplus
}
#endif

#endif
