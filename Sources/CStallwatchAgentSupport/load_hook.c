// The agent's load hook: runs when the library is loaded (LD_PRELOAD, or linked into an app), before main(). It finds
// the originals of every function the agent stands in front of (sw_originals.h), so that no stand-in asks the loader
// later, sets up what must exist before any other thread (the monitor lock, the main thread's exit destructor), ties
// a launched workload's life to its collector's, and starts the Swift agent where it is linked in.
//
// Why C: a load-time hook needs __attribute__((constructor)) and a weak symbol, which Swift cannot express.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"
#include "sw_originals.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

/// Defined (with @_cdecl) by the Swift agent module when it is linked in; absent otherwise.
extern void stallwatch_agent_autostart(void) __attribute__((weak));

static atomic_int sw_main_thread_exited;
static pthread_key_t sw_main_thread_key;

// A thread-exit destructor on the main thread alone: it runs when the main thread calls pthread_exit, in the same
// pass as CoreFoundation's own, which sets its "main thread has exited" flag. Re-setting the value is not needed:
// one call is enough to know.
static void sw_main_thread_exiting(void *value) {
    (void)value;
    atomic_store(&sw_main_thread_exited, 1);
}

int sw_agent_main_thread_exited(void) { return atomic_load(&sw_main_thread_exited); }

// Library mode's start/stop lock. Another thread of the parent may hold it at fork(): the child, which has only the
// forking thread, gets a new one (in an atfork handler, which runs before fork() returns in the child).
static pthread_mutex_t sw_monitor_lock;

static void sw_monitor_lock_initialize(void) {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&sw_monitor_lock, &attributes);
    pthread_mutexattr_destroy(&attributes);
}

void sw_agent_monitor_lock(void) { pthread_mutex_lock(&sw_monitor_lock); }
void sw_agent_monitor_unlock(void) { pthread_mutex_unlock(&sw_monitor_lock); }

/// Runs when the agent library is loaded (LD_PRELOAD or linked), before main().
__attribute__((constructor)) static void sw_agent_constructor(void) {
    sw_originals_resolve();
    sw_monitor_lock_initialize();
    pthread_atfork(NULL, NULL, sw_monitor_lock_initialize);
    if (sw_agent_gettid() == getpid() && pthread_key_create(&sw_main_thread_key, sw_main_thread_exiting) == 0) {
        pthread_setspecific(sw_main_thread_key, &sw_main_thread_key);
    }
    // Under `stallwatch run`, the workload ends with the collector that launched it: a stallwatch killed
    // with SIGKILL must not leave it running on its own, holding the terminal. Only the collector's direct
    // child: the death signal follows the parent *thread*, which in the workload's own children may be any
    // short-lived thread. secure_getenv: in a set-user-ID program the caller chose the environment.
    const char *collector = secure_getenv("STALLWATCH_COLLECTOR_PID");
    if (collector != NULL && atoi(collector) == (int)getppid()) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        // The collector may have died between our fork and the prctl: then no signal would ever come.
        if (getppid() != atoi(collector)) raise(SIGTERM);
    }
    if (stallwatch_agent_autostart != NULL) stallwatch_agent_autostart();
}
