// The main run loop without creating it: looked up in CoreFoundation's table, and caught the moment the program
// first asks for it (the hook of the agent's _CFRunLoopGet0, cf_run_loop.c).
//
// Why: making the loop makes CoreFoundation open its wake-up and timer descriptors. A daemon that closes every
// inherited descriptor at start (or dup2s over them) would close them under a loop the agent made before `main`,
// and its timers would never fire. So the agent leaves the loop to the program, and adds its observers when the
// program makes it. Every way to the loop (CFRunLoopGetMain, CFRunLoopGetCurrent on the main thread, RunLoop.main)
// goes through `_CFRunLoopGet0`, whose stand-in hands the main loop to the agent once, before the program can run it.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"
#include "sw_originals.h"
#include "sw_stand_in_hooks.h"

#include <pthread.h>
#include <stddef.h>

static void (*main_loop_hook)(void *loop);
static __thread int in_hook;

void *sw_agent_existing_main_run_loop(int *known) {
    sw_originals_resolve();
    sw_get_loop_fn lookup_loop = sw_library_internals._CFRunLoopGet0b;
    pthread_t *main_pthread = sw_library_internals._CFMainPThread;
    if (known != NULL) *known = lookup_loop != NULL && main_pthread != NULL;
    if (lookup_loop == NULL || main_pthread == NULL) return NULL;
    return lookup_loop(*main_pthread);
}

void sw_agent_on_main_run_loop(void (*hook)(void *loop)) { __atomic_store_n(&main_loop_hook, hook, __ATOMIC_RELEASE); }

void *sw_main_run_loop_obtained(pthread_t thread, void *loop) {
    // After the hook ran (or without one) this costs one load: the common case, on every CFRunLoopGetCurrent.
    if (__atomic_load_n(&main_loop_hook, __ATOMIC_ACQUIRE) == NULL || loop == NULL || in_hook) return loop;
    sw_originals_resolve();
    pthread_t *main_pthread = sw_library_internals._CFMainPThread;
    int main = pthread_equal(thread, (pthread_t)0) || (main_pthread != NULL && pthread_equal(thread, *main_pthread));
    if (!main) return loop;
    void (*hook)(void *) = __atomic_exchange_n(&main_loop_hook, NULL, __ATOMIC_ACQ_REL);
    if (hook != NULL) {
        in_hook = 1;
        hook(loop);
        in_hook = 0;
    }
    return loop;
}
