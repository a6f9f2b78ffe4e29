// The main loop's observers and progress probes, in C like the run hooks beside them (sw_main_loop_publisher.h):
// they run on the main thread at every wake and every sleep, and move the same nesting model.
#include "sw_main_loop_publisher.h"

struct sw_main_loop_publisher sw_main_publisher;

enum {
    // CFRunLoopActivity bits.
    activity_entry = 1u << 0,
    activity_before_sources = 1u << 2,
    activity_before_waiting = 1u << 5,
    activity_after_waiting = 1u << 6,
    activity_exit = 1u << 7,
    // LoopPhase raw values.
    phase_before_sources = 2,
    phase_before_waiting = 3,
    phase_sleeping = 4,
    phase_after_waiting = 5,
};

void sw_main_loop_publisher_start(sw_activity_board *board, sw_mode_index_named_fn index_named,
                                  sw_current_mode_index_fn current_mode_index, void *default_mode_name,
                                  int publishes_runs) {
    sw_main_publisher.index_named = index_named;
    sw_main_publisher.current_mode_index = current_mode_index;
    sw_main_publisher.default_mode_name = default_mode_name;
    atomic_store_explicit(&sw_main_publisher.board, board, memory_order_release);
    atomic_store_explicit(&sw_main_publisher.run_board, publishes_runs ? board : NULL, memory_order_release);
}

void sw_main_loop_publisher_stop_runs(void) {
    atomic_store_explicit(&sw_main_publisher.run_board, NULL, memory_order_release);
}

void sw_main_loop_modes_changed(void) {
    atomic_store_explicit(&sw_main_publisher.modes_changed, 1, memory_order_release);
}

uint8_t sw_main_mode_index_asked(void *mode) {
    if (mode == NULL || sw_main_publisher.index_named == NULL) return 0;
    uint8_t index = sw_main_publisher.index_named(mode);
    // Only the default mode's name object is kept: a name Foundation made for one call (any other mode) may be
    // freed after it, and its address reused for another mode's name.
    if (mode == sw_main_publisher.default_mode_name) {
        sw_main_publisher.last_entered_name = mode;
        sw_main_publisher.last_entered_index = index;
    }
    return index;
}

/// The index of the main loop's current mode, asked of CoreFoundation (through the Swift callback). Rare: an entry
/// the observers report (runs that do not pass through the agent's CFRunLoopRunSpecific, which would have told the
/// mode asked for), or a repair.
static uint8_t current_mode_index(void) {
    void *name = NULL;
    return sw_main_publisher.current_mode_index != NULL ? sw_main_publisher.current_mode_index(&name) : 0;
}

/// The loop moves to `phase`, after the nesting is repaired if it must be.
static void move(sw_activity_board *board, uint8_t phase, int precise) {
    int repair = atomic_load_explicit(&sw_main_publisher.modes_changed, memory_order_relaxed) &&
                 atomic_exchange_explicit(&sw_main_publisher.modes_changed, 0, memory_order_acquire);
    if (repair || sw_nesting_needs_mode(&sw_main_publisher.nesting))
        sw_nesting_resynchronize(&sw_main_publisher.nesting, current_mode_index());
    sw_board_publish_now(board, sw_nesting_move(&sw_main_publisher.nesting, phase), precise, 1);
}

/// The board observers and probes publish to, NULL before the monitor starts.
static sw_activity_board *observed_board(void) {
    return atomic_load_explicit(&sw_main_publisher.board, memory_order_acquire);
}

void sw_main_loop_first_observer(void *observer, unsigned long activity, void *info) {
    (void)observer;
    (void)info;
    sw_activity_board *board = observed_board();
    if (board == NULL) return;
    switch (activity) {
    case activity_before_sources: move(board, phase_before_sources, 0); break;
    case activity_after_waiting: move(board, phase_after_waiting, 1); break;
    case activity_before_waiting: move(board, phase_before_waiting, 1); break;
    case activity_entry:
        sw_board_publish_now(board, sw_nesting_enter(&sw_main_publisher.nesting, current_mode_index()), 1, 1);
        break;
    case activity_exit:
        sw_board_publish_now(board, sw_nesting_exit(&sw_main_publisher.nesting), 1, 1);
        break;
    default: break;
    }
}

void sw_main_loop_last_observer(void *observer, unsigned long activity, void *info) {
    (void)observer;
    (void)activity;
    (void)info;
    sw_activity_board *board = observed_board();
    if (board != NULL) move(board, phase_sleeping, 1);
}

void sw_main_loop_progress(void) {
    sw_activity_board *board = observed_board();
    if (board != NULL) move(board, phase_before_sources, 1);
}
