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

typedef struct sw_activity_board sw_activity_board;

/// A new board on the process's board clock (freed with sw_board_destroy once nothing publishes to it or reads it);
/// NULL if out of memory. `keeps_busy_periods`: whether publishing also fills the busy-period histogram (the main
/// loop's board).
sw_activity_board *sw_board_create(int keeps_busy_periods);
/// A new board stamped by the time-stamp counter if `counter` and the counter is usable here, else by
/// CLOCK_MONOTONIC: for tests of both.
sw_activity_board *sw_board_create_on_clock(int keeps_busy_periods, int counter);
/// Frees a board nobody publishes to or reads any more.
void sw_board_destroy(sw_activity_board *board);
/// Whether boards are stamped by the time-stamp counter in this process (see activity_board.c).
int sw_board_clock_uses_counter(void);
/// Whether this board is.
int sw_board_uses_counter(const sw_activity_board *board);

/// Publishes a transition to `phase` (a sw_loop_phase) in the run-loop mode `mode` (0 for none): one reading
/// of the board clock (on CLOCK_MONOTONIC, the coarse one unless `precise`) and one relaxed store of the packed word.
/// The watched loop's own thread only.
void sw_board_publish(sw_activity_board *board, uint8_t phase, uint8_t mode, int precise);

/// The latest packed word (0 before the first transition; laid out as sw_packed_activity.h says, the whole word
/// changing at every transition). If `nanoseconds` is not NULL, it receives the transition's
/// time in CLOCK_MONOTONIC nanoseconds (0 with a word of 0). Any thread.
uint64_t sw_board_read(const sw_activity_board *board, uint64_t *nanoseconds);
/// The full board-clock stamp nearest `now` (a board-clock reading) whose packed 56 bits are `packed`: for tests.
uint64_t sw_board_unwrap_stamp(uint64_t packed, uint64_t now);
/// Asks the loop thread to record the precise time of its next transition. Any thread.
void sw_board_arm_end_probe(sw_activity_board *board);
/// The time the end probe recorded (CLOCK_MONOTONIC nanoseconds), or 0 if the loop has not moved since it was armed.
/// Any thread.
uint64_t sw_board_end_probe(const sw_activity_board *board);
/// The busy periods counted in histogram bucket `index` (sw_latency_histogram.h; 0 on a board that keeps none, or
/// out of range).
uint64_t sw_board_busy_periods(const sw_activity_board *board, int index);
/// The longest busy period so far, exactly, in nanoseconds.
uint64_t sw_board_longest_busy_period(const sw_activity_board *board);
/// The histogram bucket the board counts a busy period of `nanoseconds` in, for tests.
int sw_board_busy_bucket(uint64_t nanoseconds);

#ifdef __cplusplus
}
#endif

#endif
