// The main run loop: found without being made (main_run_loop.c), and its activity published from C by the agent's
// CFRunLoopRunSpecific, its observers' call-outs and its progress probes (main_loop_publisher.c).
#ifndef SW_MAIN_LOOP_H
#define SW_MAIN_LOOP_H

#include "sw_activity_board.h"

#include <stdint.h>

/// The main thread's CoreFoundation run loop if the program has made it, else NULL; never creates it.
/// `known` (if not NULL) is set to 0 when this CoreFoundation cannot be asked (then NULL says nothing).
void *sw_agent_existing_main_run_loop(int *known);
/// Calls `hook` once with the main run loop the moment the program first obtains it (on the thread that asked,
/// before the program can run it), if the preloaded agent's `_CFRunLoopGet0` stands in front of CoreFoundation's;
/// never otherwise. Replaces any hook not yet called; NULL cancels.
void sw_agent_on_main_run_loop(void (*hook)(void *loop));
/// The index (1 to 15; 0 for none) of the main loop's mode named `name` (a CFStringRef), by its text. Main thread.
typedef uint8_t (*sw_mode_index_named_fn)(void *name);
/// The index of the main loop's current mode, with the identity of its name object in `name` (NULL for none).
/// Main thread.
typedef uint8_t (*sw_current_mode_index_fn)(void **name);
/// The main loop's activity board, made at the first call, for the life of the process: the one the observers, the
/// probes and the agent's CFRunLoopRunSpecific publish to (see sw_main_loop_publisher.h).
sw_activity_board *sw_main_loop_board(void);
/// Starts publishing the main loop's activity to its board (sw_main_loop_board, one that keeps busy periods; see
/// main_loop_publisher.c): from the observers made with sw_main_loop_first_observer and sw_main_loop_last_observer,
/// from sw_main_loop_progress, and, if `publishes_runs` (sw_agent_runs_pass_through_agent()), from every run of the
/// main loop through the agent's CFRunLoopRunSpecific: each run's entry and exit without CoreFoundation's observer
/// dispatch. The callbacks name modes (slow paths).
void sw_main_loop_publisher_start(sw_mode_index_named_fn index_named, sw_current_mode_index_fn current_mode_index,
                                  void *default_mode_name, int publishes_runs);
/// Runs no longer publish their entry and exit (the observers are invalidated by their owner).
void sw_main_loop_publisher_stop_runs(void);
/// Observers were added to a mode a loop may already be running in: the next transition repairs the nesting.
void sw_main_loop_modes_changed(void);
/// The main loop's observer callbacks (CFRunLoopObserverCallBack, in plain C types): the first observer's, for
/// entry, beforeSources, beforeWaiting, afterWaiting and exit; the last observer's, for beforeWaiting as sleep.
void sw_main_loop_first_observer(void *observer, unsigned long activity, void *info);
void sw_main_loop_last_observer(void *observer, unsigned long activity, void *info);
/// The main loop answered a progress probe: it is between two callouts, as at beforeSources.
void sw_main_loop_progress(void);
/// Whether libFoundation's calls to CFRunLoopRunSpecific reach the agent's (it is preloaded, or comes before
/// libFoundation in the search order): only then do runs publish their entry and exit.
int sw_agent_runs_pass_through_agent(void);

#endif
