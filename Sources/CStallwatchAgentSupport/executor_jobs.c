// Sees each job that Swift concurrency's global executor runs on a thread, without any code in the program: the
// hooks of the agent's libdispatch stand-ins (dispatch.c). Where the function handed to libdispatch lies in the
// concurrency runtime's code, the stand-in hands on a trampoline of the hooks' instead: on the thread that runs the
// job it brackets the runtime's function with "job begins" and "job ends". Nothing is allocated per job: the job (the
// context) is passed through untouched, and the runtime's function is the same for every job of a kind, so it is
// learned once. Swift cannot run code at thread exit.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"
#include "sw_stand_in_hooks.h"
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

_Atomic(sw_executor_thread_started_fn) sw_executor_started_hook;
static _Atomic(sw_executor_job_fn) job_hook;
static _Atomic(sw_executor_thread_exiting_fn) exiting_hook;

_Atomic(uintptr_t) sw_concurrency_runtime_low;
_Atomic(uintptr_t) sw_concurrency_runtime_high;
_Atomic(sw_work_fn) sw_executor_job_runner;
_Atomic(sw_work_fn) sw_executor_source_runner;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/// Bumped each time watching starts or stops: a thread is offered again at its first job of each new watch.
static _Atomic(unsigned) hooks_generation;

/// The calling thread's part, read at every job: one thread-local block.
typedef struct {
    /// The watch it was last offered to.
    unsigned generation;
    /// Jobs running on this thread, inner ones included (a job never runs another through dispatch, but if one did,
    /// only the outermost would begin and end).
    unsigned depth;
    /// What the watch's start hook returned: NULL unless the agent watches this thread.
    void *watch;
} thread_part;
static SW_FAST_TLS thread_part thread_state;

static void thread_exiting(void *watched) {
    sw_executor_thread_exiting_fn hook = atomic_load(&exiting_hook);
    if (hook != NULL && watched != NULL) hook(watched);
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, thread_exiting); }

/// Finds the code of the library that defines `swift_job_run`, if that is the concurrency runtime's own library
/// (with a runtime linked into the executable, its dispatch calls do not go through a PLT this agent can stand in).
static int find_runtime_code(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uintptr_t wanted = (uintptr_t)data;
    uintptr_t found_low = 0, found_high = 0;
    int contains = 0;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_X)) continue;
        uintptr_t low = info->dlpi_addr + header->p_vaddr, high = low + header->p_memsz;
        if (wanted >= low && wanted < high) {
            contains = 1;
            found_low = low;
            found_high = high;
        }
    }
    if (!contains) return 0;
    const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
    const char *base = strrchr(name, '/');
    base = base != NULL ? base + 1 : name;
    if (strncmp(base, "libswift_Concurrency.so", strlen("libswift_Concurrency.so")) == 0) {
        atomic_store(&sw_concurrency_runtime_low, found_low);
        atomic_store(&sw_concurrency_runtime_high, found_high);
    }
    return 1;
}

void sw_agent_set_executor_hooks(sw_executor_thread_started_fn started, sw_executor_job_fn job,
                                 sw_executor_thread_exiting_fn exiting) {
    pthread_once(&exit_key_once, make_exit_key);
    atomic_store(&exiting_hook, exiting);
    atomic_store(&job_hook, job);
    atomic_store(&sw_executor_started_hook, started);
    if (atomic_load(&sw_concurrency_runtime_high) == 0) {
        void *run = dlsym(RTLD_DEFAULT, "swift_job_run");
        if (run != NULL) (void)dl_iterate_phdr(find_runtime_code, run);
    }
    atomic_fetch_add(&hooks_generation, 1);
}

void sw_agent_stop_executor_hooks(void) {
    atomic_store(&sw_executor_started_hook, NULL);
    atomic_fetch_add(&hooks_generation, 1);
}

/// Offers the calling thread to the watch that started since its last job, letting the previous watch's go.
static void offer_thread(thread_part *state, unsigned generation) {
    state->generation = generation;
    // The previous watch's: let go as a thread that exits is.
    if (state->watch != NULL) {
        (void)pthread_setspecific(exit_key, NULL);
        thread_exiting(state->watch);
        state->watch = NULL;
    }
    sw_executor_thread_started_fn hook = atomic_load(&sw_executor_started_hook);
    // The main thread's jobs (the main actor's) are the main loop's or main queue's: watched there.
    if (hook != NULL && sw_agent_gettid() != getpid()) {
        state->watch = hook();
        if (state->watch != NULL) (void)pthread_setspecific(exit_key, state->watch);
    }
}

/// Runs one job of the runtime's on this thread, between "begins" and "ends" when the thread is watched.
static inline void run_job(sw_work_fn runner, void *context) {
    thread_part *state = &thread_state;
    unsigned generation = atomic_load_explicit(&hooks_generation, memory_order_acquire);
    if (__builtin_expect(state->generation != generation, 0)) offer_thread(state, generation);
    void *watch = state->watch;
    sw_executor_job_fn job = watch != NULL ? atomic_load_explicit(&job_hook, memory_order_relaxed) : NULL;
    if (job != NULL && state->depth++ == 0) job(watch, 1);
    runner(context);
    if (job != NULL && --state->depth == 0) job(watch, 0);
}

void sw_executor_job_trampoline(void *context) { run_job(atomic_load(&sw_executor_job_runner), context); }

void sw_executor_source_trampoline(void *context) { run_job(atomic_load(&sw_executor_source_runner), context); }
