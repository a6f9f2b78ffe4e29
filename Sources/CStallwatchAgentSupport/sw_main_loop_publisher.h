// The main loop's publisher: the run-loop nesting model and the activity board, driven by the agent's
// CFRunLoopRunSpecific (each run's entry and exit, inline below, with no call) and by the main loop's observers and
// progress probes (main_loop_publisher.c). Private to the agent's C; its Swift face is in CStallwatchAgentSupport.h.
#ifndef SW_MAIN_LOOP_PUBLISHER_H
#define SW_MAIN_LOOP_PUBLISHER_H

#include "CStallwatchAgentSupport.h"
#include "sw_board_internal.h"
#include "CStallwatchLoopModel.h"

/// The main loop's board, for the life of the process (sw_main_loop_board): at a fixed address, so that the run
/// hooks reach it with no load, and whether runs publish is one of its slow reasons
/// (sw_board_slow_runs_unpublished), tested with the rest.
extern sw_activity_board sw_main_board SW_HIDDEN;

/// The main thread's publishing state (the agent runs one monitor). Written on the main thread alone, but for the
/// atomics, which the watcher sets.
struct sw_main_loop_publisher {
    /// Whether the observers and probes publish (to sw_main_board): 0 before the monitor starts.
    _Atomic int observed;
    /// Set when observers were added to a mode a loop may already be running in: the next transition repairs the
    /// nesting from the mode CoreFoundation reports.
    _Atomic int modes_changed;
    sw_nesting nesting;
    /// The last mode name object whose entry state is known, with it: a Foundation loop (`RunLoop.run(until:)`)
    /// enters the same mode at every iteration, so its entry costs one comparison.
    void *last_entered_name;
    uint8_t last_entry_state;
    /// The board's word after the latest run's entry: unchanged when the run returns, CoreFoundation may never have
    /// entered it.
    uint64_t word_at_entry;
    void *default_mode_name;
    sw_mode_index_named_fn index_named;
    sw_current_mode_index_fn current_mode_index;
};

extern struct sw_main_loop_publisher sw_main_publisher SW_HIDDEN;

/// The entry state of a run in `mode` (the name it was asked for), when that is not the last one seen. Rare.
SW_RARE uint8_t sw_main_entry_state_asked(void *mode);

/// The return of a run entered from outside every loop in a state other than plain outsideLoop: before the thread's
/// first run was entered (notStarted; or outsideLoop with a mode, as a repair of the nesting leaves it until the
/// next move), where undoing a run CoreFoundation never entered differs from leaving it. Rare.
SW_RARE void sw_main_first_run_returned(uint8_t outer, int32_t result);

/// A run of the main loop begins, in the mode it was asked for: returns the state it was entered from, for
/// sw_main_run_exited. `reasons`: the main board's slow reasons, read by the caller, which has checked that runs
/// publish.
SW_INLINE uint8_t sw_main_run_entered(void *mode, uint32_t reasons) {
    // A NULL mode matches only before any name is kept, when the entry state kept is mode 0's (none).
    uint8_t entry = mode == sw_main_publisher.last_entered_name ? sw_main_publisher.last_entry_state
                                                                : sw_main_entry_state_asked(mode);
    uint8_t outer = sw_nesting_enter_keeping_outer(&sw_main_publisher.nesting, entry);
    sw_main_publisher.word_at_entry = sw_board_publish_run_transition(&sw_main_board, entry, reasons);
    return outer;
}

/// The run entered from `outer` returned with CoreFoundation's `result`. A run of a mode with nothing in it
/// (kCFRunLoopRunFinished, 1, with nothing published since its entry) was never entered by CoreFoundation, which
/// calls no observer for it either: undoing its entry gives back `outer`, which is what its exit gives too, but
/// where `outer` is the state before any loop (sw_main_first_run_returned): a thread that has not run its loop yet
/// is not taken for one outside it. The nesting follows even if runs stopped publishing meanwhile.
SW_INLINE void sw_main_run_exited(uint8_t outer, int32_t result) {
    sw_nesting *nesting = &sw_main_publisher.nesting;
    if (outer == sw_phase_outside_loop) {
        // Between two runs of a pumped loop (a Foundation loop's every iteration): one comparison, a constant state.
        sw_board_publish_inside_busy_period(&sw_main_board, sw_nesting_exit_to(nesting, sw_phase_outside_loop));
    } else if (!sw_phase_is_outside_loops(outer)) {
        // Back in a callout of the loop outside.
        sw_board_publish_inside_busy_period(&sw_main_board, sw_nesting_exit_to(nesting, outer));
    } else {
        sw_main_first_run_returned(outer, result);
    }
}

#endif
