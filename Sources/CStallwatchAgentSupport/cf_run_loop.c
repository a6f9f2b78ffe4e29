// Stand-ins for CoreFoundation's run loop: CFRunLoopRunSpecific, where every way of running a run loop ends
// (CFRunLoopRun, CFRunLoopRunInMode, Foundation's RunLoop.run(mode:before:)), and _CFRunLoopGet0, where every way to a
// thread's loop goes (CFRunLoopGetMain, CFRunLoopGetCurrent, RunLoop.main). libFoundation calls both through its PLT,
// so the preloaded agent's come first; each hands on to the hooks of what it serves and to CoreFoundation's own
// (sw_originals.h).
//
// CFRunLoopRunSpecific is the main loop's per-transition hot path: a run of the main loop while it is watched
// publishes its entry and exit inline (sw_main_loop_publisher.h), with no call but CoreFoundation's run; a run on
// another thread offers the thread to a watch of loop threads once (loop_threads.c). _CFRunLoopGet0 tells the main
// loop's hook of the loop the moment the program first obtains it (main_run_loop.c).
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"
#include "sw_main_loop_publisher.h"
#include "sw_originals.h"
#include "sw_stand_in_hooks.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

/// 1 on the process's main thread, -1 on any other, 0 before the calling thread's first run through here.
static SW_FAST_TLS int thread_role;

__attribute__((noinline)) static int classify_thread(void) {
    thread_role = sw_agent_gettid() == getpid() ? 1 : -1;
    return thread_role;
}

int sw_agent_runs_pass_through_agent(void) {
    // The definition libFoundation's calls bind to is the first in the global scope; it is ours if it lies in the
    // object that holds this file's code. (Comparing with &CFRunLoopRunSpecific would compare that first definition
    // with itself: the name binds the same way from here; a thread-local's address lies in no object.)
    Dl_info found, own;
    void *first = dlsym(RTLD_DEFAULT, "CFRunLoopRunSpecific");
    if (first == NULL || dladdr(first, &found) == 0 || dladdr((void *)classify_thread, &own) == 0) return 0;
    return found.dli_fbase == own.dli_fbase;
}

/// Hands the run on to CoreFoundation's CFRunLoopRunSpecific.
SW_INLINE int32_t hand_on(void *loop, void *mode, double seconds, unsigned char return_after_source_handled) {
    return SW_ORIGINAL(CFRunLoopRunSpecific)(loop, mode, seconds, return_after_source_handled);
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
    sw_loop_thread_runs(loop);
    return hand_on(loop, mode, seconds, return_after_source_handled);
}

/// CoreFoundation's `CFRunLoopRunSpecific(CFRunLoopRef, CFStringRef, CFTimeInterval, Boolean)`, in plain C types.
/// The main thread's runs publish their entry and exit while the agent watches, the common one (watched, nothing
/// slow to do) inline; a run the agent does not watch is handed on at the cost of a few loads.
__attribute__((visibility("default"))) int32_t CFRunLoopRunSpecific(void *loop, void *mode, double seconds,
                                                                    unsigned char return_after_source_handled) {
    if (thread_role <= 0) return other_thread_run(loop, mode, seconds, return_after_source_handled);
    uint32_t reasons = atomic_load_explicit(&sw_main_board.slow_reasons, memory_order_acquire);
    if (reasons == 0) return publishing_run(loop, mode, seconds, return_after_source_handled, 0);
    if (reasons & sw_board_slow_runs_unpublished) return hand_on(loop, mode, seconds, return_after_source_handled);
    return main_run_slowly(loop, mode, seconds, return_after_source_handled, reasons);
}

/// CoreFoundation's `_CFRunLoopGet0(pthread_t)`: the thread's run loop, made at its first request.
__attribute__((visibility("default"))) void *_CFRunLoopGet0(pthread_t thread) {
    return sw_main_run_loop_obtained(thread, SW_ORIGINAL(_CFRunLoopGet0)(thread));
}
