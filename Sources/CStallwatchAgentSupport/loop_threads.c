// Finds the run loops of threads other than the main one without any code in the program. Every way of running a
// CoreFoundation run loop — CFRunLoopRun, CFRunLoopRunInMode, Foundation's RunLoop.run(mode:before:) — ends in
// CFRunLoopRunSpecific, which libFoundation calls through its PLT: the preloaded agent defines it first, so it sees
// each thread's first run, tells the agent once per thread, and hands every call on to CoreFoundation's own.
// Swift cannot define a C symbol of a given name, nor run code at thread exit.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"
#include "sw_interposition.h"
#include "sw_main_loop_publisher.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef int32_t (*sw_run_specific_fn)(void *, void *, double, unsigned char);

static _Atomic(sw_loop_thread_started_fn) started_hook;
static _Atomic(sw_loop_thread_exiting_fn) exiting_hook;
static int32_t resolve_and_run(void *loop, void *mode, double seconds, unsigned char return_after_source_handled);
/// CoreFoundation's CFRunLoopRunSpecific, once looked up; until then the function that looks it up, so that a run
/// calls through it with no test.
static _Atomic(sw_run_specific_fn) real_run_specific = resolve_and_run;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
/// Bumped each time hooks are set: a thread is offered again at its first run of each new watch (a second attach).
static _Atomic(unsigned) hooks_generation;
/// The watch (generation) the calling thread's run was last offered to, and what that watch's hook returned.
static SW_FAST_TLS unsigned thread_generation;
static SW_FAST_TLS void *thread_watched;
static void thread_exiting(void *watched);

/// 1 on the process's main thread, -1 on any other, 0 before the calling thread's first run through here.
static SW_FAST_TLS int thread_role;

int sw_agent_runs_pass_through_agent(void) {
    // The definition libFoundation's calls bind to is the first in the global scope; it is ours if it lies in the
    // object that holds this file's code. (Comparing with &CFRunLoopRunSpecific would compare that first definition
    // with itself: the name binds the same way from here.)
    Dl_info found, own;
    void *first = dlsym(RTLD_DEFAULT, "CFRunLoopRunSpecific");
    if (first == NULL || dladdr(first, &found) == 0 || dladdr((void *)thread_exiting, &own) == 0) return 0;
    return found.dli_fbase == own.dli_fbase;
}

static void thread_exiting(void *watched) {
    sw_loop_thread_exiting_fn hook = atomic_load(&exiting_hook);
    if (hook != NULL && watched != NULL) hook(watched);
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, thread_exiting); }

void sw_agent_set_loop_thread_hooks(sw_loop_thread_started_fn started, sw_loop_thread_exiting_fn exiting) {
    pthread_once(&exit_key_once, make_exit_key);
    atomic_store(&exiting_hook, exiting);
    atomic_store(&started_hook, started);
    atomic_fetch_add(&hooks_generation, 1);
}

/// Offers the calling thread (not the main one) to the current watch, once per watch, once a hook is there to take
/// it. Out of line: it runs at a thread's first run of each watch.
__attribute__((noinline)) static void offer_thread(void *loop, unsigned generation) {
    sw_loop_thread_started_fn hook = atomic_load(&started_hook);
    if (hook == NULL) return;
    thread_generation = generation;
    // The previous watch's: let go as a thread that exits is.
    if (thread_watched != NULL) {
        (void)pthread_setspecific(exit_key, NULL);
        thread_exiting(thread_watched);
    }
    thread_watched = hook(loop);
    if (thread_watched != NULL) (void)pthread_setspecific(exit_key, thread_watched);
}

__attribute__((noinline)) static int classify_thread(void) {
    thread_role = sw_agent_gettid() == getpid() ? 1 : -1;
    return thread_role;
}

/// The first run in the process: finds CoreFoundation's definition (the next after the agent's) and hands on.
__attribute__((noinline)) static int32_t resolve_and_run(void *loop, void *mode, double seconds,
                                                         unsigned char return_after_source_handled) {
    sw_run_specific_fn real = (sw_run_specific_fn)dlsym(RTLD_NEXT, "CFRunLoopRunSpecific");
    // No CoreFoundation behind us (cannot happen in a process that called this): "finished", as for an empty loop.
    if (real == NULL) return 1;
    atomic_store_explicit(&real_run_specific, real, memory_order_release);
    return real(loop, mode, seconds, return_after_source_handled);
}

/// Hands the run on to CoreFoundation's CFRunLoopRunSpecific.
SW_INLINE int32_t hand_on(void *loop, void *mode, double seconds, unsigned char return_after_source_handled) {
    return atomic_load_explicit(&real_run_specific, memory_order_acquire)(loop, mode, seconds,
                                                                          return_after_source_handled);
}

/// A run of the main loop while runs publish (the main board's slow `reasons` without
/// sw_board_slow_runs_unpublished): its entry and exit around CoreFoundation's run.
SW_INLINE int32_t publishing_run(void *loop, void *mode, double seconds, unsigned char return_after_source_handled,
                                 uint32_t reasons) {
    uint8_t outer = sw_main_run_entered(mode, reasons);
    int32_t result = hand_on(loop, mode, seconds, return_after_source_handled);
    sw_main_run_exited(outer, result);
    return result;
}

/// A run of the main thread while runs publish but its board has a slow reason (the end probe armed, the clock
/// CLOCK_MONOTONIC, no busy period yet). Out of line, so that the common run's code keeps its values in registers.
__attribute__((noinline)) static int32_t main_run_slowly(void *loop, void *mode, double seconds,
                                                         unsigned char return_after_source_handled, uint32_t reasons) {
    return publishing_run(loop, mode, seconds, return_after_source_handled, reasons);
}

int32_t CFRunLoopRunSpecific(void *loop, void *mode, double seconds, unsigned char return_after_source_handled);

/// A run of a thread other than the main one, or a thread's first (which learns whether it is the main thread).
__attribute__((noinline)) static int32_t other_thread_run(void *loop, void *mode, double seconds,
                                                          unsigned char return_after_source_handled) {
    // Classified once, then back through the stand-in as the thread it is.
    if (thread_role == 0 && classify_thread() > 0)
        return CFRunLoopRunSpecific(loop, mode, seconds, return_after_source_handled);
    unsigned generation = atomic_load_explicit(&hooks_generation, memory_order_acquire);
    if (thread_generation != generation) offer_thread(loop, generation);
    return hand_on(loop, mode, seconds, return_after_source_handled);
}

/// CoreFoundation's `CFRunLoopRunSpecific(CFRunLoopRef, CFStringRef, CFTimeInterval, Boolean)`, in plain C types.
/// The main thread's runs publish their entry and exit (sw_main_loop_publisher.h) while the agent watches; another
/// thread's first run of each watch is offered to it. The main thread's runs are handled here, the common one
/// (watched, nothing slow to do) inline; a run the agent does not watch is handed on at the cost of a few loads.
__attribute__((visibility("default"))) int32_t CFRunLoopRunSpecific(
    void *loop, void *mode, double seconds, unsigned char return_after_source_handled) {
    if (thread_role <= 0) return other_thread_run(loop, mode, seconds, return_after_source_handled);
    uint32_t reasons = atomic_load_explicit(&sw_main_board.slow_reasons, memory_order_acquire);
    if (reasons == 0) return publishing_run(loop, mode, seconds, return_after_source_handled, 0);
    if (reasons & sw_board_slow_runs_unpublished) return hand_on(loop, mode, seconds, return_after_source_handled);
    return main_run_slowly(loop, mode, seconds, return_after_source_handled, reasons);
}
