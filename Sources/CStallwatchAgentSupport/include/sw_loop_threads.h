// Run loops on threads other than the main one, offered to a watch at their first run (loop_threads.c).
#ifndef SW_LOOP_THREADS_H
#define SW_LOOP_THREADS_H

/// Called on a thread other than the main one when it first runs its CoreFoundation run loop, with that loop
/// (a CFRunLoopRef); returns what to hand `sw_loop_thread_exiting_fn` when the thread exits, or NULL to leave the
/// thread alone.
typedef void *(*sw_loop_thread_started_fn)(void *loop);
/// Called on a watched loop thread as it exits (a thread-exit destructor), with what the start hook returned.
typedef void (*sw_loop_thread_exiting_fn)(void *watched);

/// Asks to hear of every thread that runs a run loop from now on (see loop_threads.c: the agent stands in for
/// CFRunLoopRunSpecific, cf_run_loop.c). Each thread is offered once, on its first run after this call.
void sw_agent_set_loop_thread_hooks(sw_loop_thread_started_fn started, sw_loop_thread_exiting_fn exiting);

#endif
