// The named hooks the agent's stand-ins hand on to (cf_run_loop.c, dispatch.c), defined by the subsystem each serves:
// the main loop's publisher (sw_main_loop_publisher.h), the main run loop's discovery (main_run_loop.c), loop threads
// (loop_threads.c) and executor jobs (executor_jobs.c). The ones on a path every call takes are inline; each inline
// one tests one word and calls out only for its rare case.
#ifndef SW_STAND_IN_HOOKS_H
#define SW_STAND_IN_HOOKS_H

#include "CStallwatchAgentSupport.h"
#include "sw_agent_internal.h"
#include "sw_originals.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

// MARK: The main run loop (main_run_loop.c)

/// CoreFoundation handed out `loop`, the run loop of `thread`: the main loop's hook hears of it once. Returns `loop`.
SW_HIDDEN void *sw_main_run_loop_obtained(pthread_t thread, void *loop);

// MARK: Loop threads (loop_threads.c)

/// Bumped each time loop-thread hooks are set: a thread is offered again at its first run of each new watch.
extern _Atomic(unsigned) sw_loop_threads_generation SW_HIDDEN;
/// The watch (generation) the calling thread was last offered to.
extern SW_FAST_TLS unsigned sw_loop_thread_generation SW_HIDDEN;

/// Offers the calling thread (not the main one), about to run `loop`, to the watch of `generation`. Rare.
SW_HIDDEN __attribute__((noinline)) void sw_loop_thread_offer(void *loop, unsigned generation);

/// A thread other than the main one is about to run `loop`: offered once per watch.
SW_INLINE void sw_loop_thread_runs(void *loop) {
    unsigned generation = atomic_load_explicit(&sw_loop_threads_generation, memory_order_acquire);
    if (sw_loop_thread_generation != generation) sw_loop_thread_offer(loop, generation);
}

// MARK: Executor jobs (executor_jobs.c)

/// The concurrency runtime's code, [low, high): 0, 0 until hooks are set, or when it is not a library of its own.
extern _Atomic(uintptr_t) sw_concurrency_runtime_low SW_HIDDEN;
extern _Atomic(uintptr_t) sw_concurrency_runtime_high SW_HIDDEN;
/// The start hook of the watch of executor threads, NULL while none is on.
extern _Atomic(sw_executor_thread_started_fn) sw_executor_started_hook SW_HIDDEN;
/// The runtime's job runner (dispatch_async_f and dispatch_after_f) and its timer-source handler, once seen.
extern _Atomic(sw_work_fn) sw_executor_job_runner SW_HIDDEN;
extern _Atomic(sw_work_fn) sw_executor_source_runner SW_HIDDEN;

/// The trampolines that bracket the runtime's job runner and source handler with "job begins" and "job ends".
SW_HIDDEN void sw_executor_job_trampoline(void *context);
SW_HIDDEN void sw_executor_source_trampoline(void *context);

/// Whether `work` is the concurrency runtime's, for `slot`: the first of the runtime's functions seen there is taken
/// as the runner of that kind, and only it is wrapped.
SW_INLINE int sw_executor_is_runner(sw_work_fn work, _Atomic(sw_work_fn) *slot) {
    uintptr_t address = (uintptr_t)work;
    uintptr_t high = atomic_load_explicit(&sw_concurrency_runtime_high, memory_order_relaxed);
    if (high == 0 || address >= high ||
        address < atomic_load_explicit(&sw_concurrency_runtime_low, memory_order_relaxed))
        return 0;
    if (atomic_load_explicit(&sw_executor_started_hook, memory_order_relaxed) == NULL) return 0;
    sw_work_fn known = atomic_load_explicit(slot, memory_order_acquire);
    if (known == NULL) {
        sw_work_fn expected = NULL;
        if (atomic_compare_exchange_strong(slot, &expected, work)) return 1;
        known = expected;
    }
    return known == work;
}

/// What to hand libdispatch in place of a job's `work`: the trampoline where it is the concurrency runtime's runner
/// and jobs are watched, else `work` itself (one range test for any other caller's work).
SW_INLINE sw_work_fn sw_executor_job_work(sw_work_fn work) {
    return sw_executor_is_runner(work, &sw_executor_job_runner) ? sw_executor_job_trampoline : work;
}

/// The same for a timer source's event handler.
SW_INLINE sw_work_fn sw_executor_source_handler(sw_work_fn handler) {
    return handler != NULL && sw_executor_is_runner(handler, &sw_executor_source_runner) ? sw_executor_source_trampoline
                                                                                         : handler;
}

#endif
