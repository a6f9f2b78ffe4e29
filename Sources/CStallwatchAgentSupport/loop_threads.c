// Finds the run loops of threads other than the main one without any code in the program: the hook of the agent's
// CFRunLoopRunSpecific (cf_run_loop.c), which sees each thread's first run of each watch and offers the thread to it
// once. Swift cannot run code at thread exit.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"
#include "sw_stand_in_hooks.h"
#include <pthread.h>
#include <stdatomic.h>

static _Atomic(sw_loop_thread_started_fn) started_hook;
static _Atomic(sw_loop_thread_exiting_fn) exiting_hook;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
_Atomic(unsigned) sw_loop_threads_generation;
SW_FAST_TLS unsigned sw_loop_thread_generation;
/// What the watch the calling thread was last offered to returned for it.
static SW_FAST_TLS void *thread_watched;

static void thread_exiting(void *watched) {
    sw_loop_thread_exiting_fn hook = atomic_load(&exiting_hook);
    if (hook != NULL && watched != NULL) hook(watched);
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, thread_exiting); }

void sw_agent_set_loop_thread_hooks(sw_loop_thread_started_fn started, sw_loop_thread_exiting_fn exiting) {
    pthread_once(&exit_key_once, make_exit_key);
    atomic_store(&exiting_hook, exiting);
    atomic_store(&started_hook, started);
    atomic_fetch_add(&sw_loop_threads_generation, 1);
}

void sw_loop_thread_offer(void *loop, unsigned generation) {
    sw_loop_thread_started_fn hook = atomic_load(&started_hook);
    if (hook == NULL) return;
    sw_loop_thread_generation = generation;
    // The previous watch's: let go as a thread that exits is.
    if (thread_watched != NULL) {
        (void)pthread_setspecific(exit_key, NULL);
        thread_exiting(thread_watched);
    }
    thread_watched = hook(loop);
    if (thread_watched != NULL) (void)pthread_setspecific(exit_key, thread_watched);
}
