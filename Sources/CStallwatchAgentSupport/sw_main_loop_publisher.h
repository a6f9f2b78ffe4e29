// The main loop's publisher: the run-loop nesting model and the activity board, driven by the agent's
// CFRunLoopRunSpecific (each run's entry and exit, inline below, with no call) and by the main loop's observers and
// progress probes (main_loop_publisher.c). Private to the agent's C; its Swift face is in CStallwatchAgentSupport.h.
#ifndef SW_MAIN_LOOP_PUBLISHER_H
#define SW_MAIN_LOOP_PUBLISHER_H

#include "CStallwatchAgentSupport.h"
#include "sw_board_internal.h"
#include "sw_run_loop_nesting.h"

/// The main thread's publishing state (the agent runs one monitor). Written on the main thread alone, but for the
/// atomics, which the watcher sets.
struct sw_main_loop_publisher {
    /// The board the observers and probes publish to; NULL before the monitor starts.
    _Atomic(sw_activity_board *) board;
    /// The same board while runs through the agent's CFRunLoopRunSpecific publish their entry and exit; NULL when not.
    _Atomic(sw_activity_board *) run_board;
    /// Set when observers were added to a mode a loop may already be running in: the next transition repairs the
    /// nesting from the mode CoreFoundation reports.
    _Atomic int modes_changed;
    sw_nesting nesting;
    /// The last mode name object whose index is known, with it: a Foundation loop (`RunLoop.run(until:)`) enters
    /// the same mode at every iteration, so its entry costs one comparison.
    void *last_entered_name;
    uint8_t last_entered_index;
    /// The board's word after the latest run's entry: unchanged when the run returns, CoreFoundation may never have
    /// entered it.
    uint64_t word_at_entry;
    void *default_mode_name;
    sw_mode_index_named_fn index_named;
    sw_current_mode_index_fn current_mode_index;
};

extern struct sw_main_loop_publisher sw_main_publisher __attribute__((visibility("hidden")));

/// The index of a run's mode from the name it was asked for, when that is not the last one seen. Rare.
__attribute__((noinline, visibility("hidden"))) uint8_t sw_main_mode_index_asked(void *mode);

/// A run of the main loop begins, in the mode it was asked for; `board` is the one runs publish to
/// (`sw_main_publisher.run_board`, read by the caller).
SW_INLINE void sw_main_run_entered(sw_activity_board *board, void *mode) {
    // A NULL mode matches only before any name is kept, when the index kept is 0 (none), as it should be.
    uint8_t index = mode == sw_main_publisher.last_entered_name ? sw_main_publisher.last_entered_index
                                                                : sw_main_mode_index_asked(mode);
    uint8_t state = sw_nesting_enter(&sw_main_publisher.nesting, index);
    sw_main_publisher.word_at_entry = sw_board_publish_now(board, state, 1, 1);
}

/// The run returned with CoreFoundation's `result`. A run of a mode with nothing in it (kCFRunLoopRunFinished, 1,
/// with nothing published since its entry) was never entered by CoreFoundation, which calls no observer for it
/// either: the entry is undone, so that a thread that has not run its loop yet is not taken for one outside it.
/// Told only if the agent still publishes runs to the board the entry went to (`entered`, not NULL).
SW_INLINE void sw_main_run_exited(sw_activity_board *entered, int32_t result) {
    sw_activity_board *board = atomic_load_explicit(&sw_main_publisher.run_board, memory_order_acquire);
    if (board != entered) return;
    uint8_t state = result == 1 && atomic_load_explicit(&board->word, memory_order_relaxed) ==
                                       sw_main_publisher.word_at_entry
                        ? sw_nesting_cancel_entry(&sw_main_publisher.nesting)
                        : sw_nesting_exit(&sw_main_publisher.nesting);
    sw_board_publish_now(board, state, 1, 1);
}

#endif
