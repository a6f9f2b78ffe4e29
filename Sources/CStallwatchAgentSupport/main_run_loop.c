// The main run loop without creating it: looked up in CoreFoundation's table, and caught the moment the program
// first asks for it.
//
// Why: making the loop makes CoreFoundation open its wake-up and timer descriptors. A daemon that closes every
// inherited descriptor at start (or dup2s over them) would close them under a loop the agent made before `main`,
// and its timers would never fire. So the agent leaves the loop to the program, and adds its observers when the
// program makes it. Every way to the loop (CFRunLoopGetMain, CFRunLoopGetCurrent on the main thread, RunLoop.main)
// goes through `_CFRunLoopGet0`, which libFoundation calls through its PLT: the preloaded agent's definition below
// comes first, calls CoreFoundation's, and hands the main loop to the agent once, before the program can run it.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

typedef void *(*get_loop_fn)(pthread_t);

static get_loop_fn real_get_loop;
static get_loop_fn lookup_loop;
static pthread_t *main_pthread;
static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static void (*main_loop_hook)(void *loop);
static __thread int in_hook;

void *_CFRunLoopGet0(pthread_t thread);

static void resolve(void) {
    // The next definition after the agent's (CoreFoundation's, when the agent is preloaded); when the agent comes
    // after libFoundation in the search order, libFoundation binds to its own and never calls this one.
    real_get_loop = (get_loop_fn)dlsym(RTLD_NEXT, "_CFRunLoopGet0");
    if (real_get_loop == NULL || real_get_loop == _CFRunLoopGet0) {
        get_loop_fn global = (get_loop_fn)dlsym(RTLD_DEFAULT, "_CFRunLoopGet0");
        real_get_loop = global != _CFRunLoopGet0 ? global : NULL;
    }
    lookup_loop = (get_loop_fn)dlsym(RTLD_DEFAULT, "_CFRunLoopGet0b");
    main_pthread = (pthread_t *)dlsym(RTLD_DEFAULT, "_CFMainPThread");
}

void *sw_agent_existing_main_run_loop(int *known) {
    pthread_once(&resolved, resolve);
    if (known != NULL) *known = lookup_loop != NULL && main_pthread != NULL;
    if (lookup_loop == NULL || main_pthread == NULL) return NULL;
    return lookup_loop(*main_pthread);
}

void sw_agent_on_main_run_loop(void (*hook)(void *loop)) { __atomic_store_n(&main_loop_hook, hook, __ATOMIC_RELEASE); }

void *_CFRunLoopGet0(pthread_t thread) {
    pthread_once(&resolved, resolve);
    if (real_get_loop == NULL) return NULL;
    void *loop = real_get_loop(thread);
    // After the hook ran (or without one) this costs one load: the common case, on every CFRunLoopGetCurrent.
    if (__atomic_load_n(&main_loop_hook, __ATOMIC_ACQUIRE) == NULL || loop == NULL || in_hook) return loop;
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
