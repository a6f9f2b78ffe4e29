// The main loop's observers and progress probes, in C like the run hooks beside them (sw_main_loop_publisher.h):
// they run on the main thread at every wake and every sleep, and move the same nesting model.
#include "sw_main_loop_publisher.h"

#include <pthread.h>

// A run asked for no mode, before any name is kept, matches the name kept (NULL): the entry of mode 0, none.
// (Mode 0's state byte is its phase alone.)
struct sw_main_loop_publisher sw_main_publisher = {.last_entry_state = sw_phase_entry};
// Runs do not publish until a monitor starts; before sw_main_loop_board makes it, the board is not ready to.
sw_activity_board sw_main_board = {.slow_reasons = sw_board_slow_runs_unpublished};

static pthread_once_t main_board_once = PTHREAD_ONCE_INIT;

static void make_main_board(void) { sw_board_initialize(&sw_main_board, 1, 1); }

sw_activity_board *sw_main_loop_board(void) {
    pthread_once(&main_board_once, make_main_board);
    return &sw_main_board;
}

void sw_main_loop_publisher_start(sw_mode_index_named_fn index_named, sw_current_mode_index_fn current_mode_index,
                                  void *default_mode_name, int publishes_runs) {
    sw_activity_board *board = sw_main_loop_board();
    sw_main_publisher.index_named = index_named;
    sw_main_publisher.current_mode_index = current_mode_index;
    sw_main_publisher.default_mode_name = default_mode_name;
    atomic_store_explicit(&sw_main_publisher.observed, 1, memory_order_release);
    if (publishes_runs)
        atomic_fetch_and_explicit(&board->slow_reasons, ~(uint32_t)sw_board_slow_runs_unpublished,
                                  memory_order_release);
}

void sw_main_loop_publisher_stop_runs(void) {
    atomic_fetch_or_explicit(&sw_main_loop_board()->slow_reasons, sw_board_slow_runs_unpublished, memory_order_release);
}

void sw_main_loop_modes_changed(void) {
    atomic_store_explicit(&sw_main_publisher.modes_changed, 1, memory_order_release);
}

uint8_t sw_main_entry_state_asked(void *mode) {
    if (mode == NULL || sw_main_publisher.index_named == NULL) return sw_nesting_entry_state(0);
    uint8_t entry = sw_nesting_entry_state(sw_main_publisher.index_named(mode));
    // Only the default mode's name object is kept: a name Foundation made for one call (any other mode) may be
    // freed after it, and its address reused for another mode's name.
    if (mode == sw_main_publisher.default_mode_name) {
        sw_main_publisher.last_entered_name = mode;
        sw_main_publisher.last_entry_state = entry;
    }
    return entry;
}

void sw_main_first_run_returned(uint8_t outer, int32_t result) {
    uint64_t word = atomic_load_explicit(&sw_main_board.word, memory_order_relaxed);
    uint8_t state = result == 1 && word == sw_main_publisher.word_at_entry
                        ? sw_nesting_cancel_entry_to(&sw_main_publisher.nesting, outer)
                        : sw_nesting_exit_to(&sw_main_publisher.nesting, outer);
    sw_board_publish_inside_busy_period(&sw_main_board, state);
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
    return atomic_load_explicit(&sw_main_publisher.observed, memory_order_acquire) ? &sw_main_board : NULL;
}

/// The observers' call-out: the activity CoreFoundation reports, as the loop model's table reads it.
SW_INLINE void observe(unsigned long cf_activity, int last_observer) {
    sw_activity_board *board = observed_board();
    if (board == NULL) return;
    sw_loop_activity activity = sw_activity_observed(cf_activity, last_observer);
    int precise = sw_activity_is_precise(activity);
    switch (activity) {
    case sw_activity_none: break;
    case sw_activity_entry:
        sw_board_publish_now(board, sw_nesting_enter(&sw_main_publisher.nesting, current_mode_index()), precise, 1);
        break;
    case sw_activity_exit: sw_board_publish_now(board, sw_nesting_exit(&sw_main_publisher.nesting), precise, 1); break;
    default: move(board, sw_activity_phase(activity), precise); break;
    }
}

void sw_main_loop_first_observer(void *observer, unsigned long activity, void *info) {
    (void)observer;
    (void)info;
    observe(activity, 0);
}

void sw_main_loop_last_observer(void *observer, unsigned long activity, void *info) {
    (void)observer;
    (void)activity;
    (void)info;
    // Asked for beforeWaiting alone (RunLoopObservers.lastActivities): what the table gives it, with no test.
    observe(sw_cf_activity_before_waiting, 1);
}

void sw_main_loop_progress(void) {
    sw_activity_board *board = observed_board();
    if (board != NULL) move(board, sw_phase_before_sources, 1);
}
