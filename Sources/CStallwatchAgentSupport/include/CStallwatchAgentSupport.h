// The agent's C half: load-time hook, clocks and thread ids, and in-process stack capture with a
// signal and libunwind (loaded with dlopen, never linked). Only plain C types cross this header.
#ifndef C_STALLWATCH_AGENT_SUPPORT_H
#define C_STALLWATCH_AGENT_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sw_activity_board.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The real-time signal used for captures unless told otherwise: SIGRTMIN + 5.
int sw_agent_default_capture_signal(void);

/// Makes in-process capture ready: dlopen("libunwind.so.8"), install the `signal_number` handler
/// (SA_SIGINFO | SA_RESTART), unwind once on the calling thread to warm libunwind up.
/// Returns 0, or a negative errno (-ENOENT: libunwind not found, -EBUSY: prepared for another signal,
/// -EINVAL: not a real-time signal); `sw_agent_capture_error()` says more. Calling it again with the
/// same signal is a no-op.
int sw_agent_capture_prepare(int signal_number);

/// Why the calling thread's last `sw_agent_capture_prepare` or `sw_agent_capture_thread` failed
/// (thread-local text, valid until its next call; empty if it succeeded).
const char *sw_agent_capture_error(void);

/// Captures the stack of thread `tid` of this process, from another thread: signals it, lets its
/// handler unwind itself into a static buffer, waits up to `timeout_ms`, and copies the frames out.
/// `addresses[0]` is the interrupted program counter; the following entries are return addresses
/// (symbolicate `address - 1`). `stopped_ns`, if not NULL, receives how long the thread spent in the
/// handler. `context_hints`, if not NULL, holds 2 * `max_frames` words and receives, per frame, where a Swift async
/// function running there keeps its async context: `[2k]` the word below the frame's async frame record (0 without
/// one), `[2k+1]` its r14 (as `sw_remote_capture` in CStallwatchUnwind). Returns the frame count (> 0), or a negative errno: -EINVAL (not prepared, bad argument),
/// -ESRCH (no such thread), -ETIMEDOUT (the thread did not answer in time: it blocks the signal, as
/// libdispatch worker threads and threads they create do), -EDEADLK (called on the thread to
/// capture), -EIO (libunwind failed). Callers are serialized.
///
/// The signal interrupts what the thread is doing: a blocking nanosleep()/usleep()/select() in it
/// returns early with EINTR (SA_RESTART does not restart sleeps), which the workload may not retry.
/// Prefer the ptrace capture from outside the process where it is permitted.
int sw_agent_capture_thread(pid_t tid, uint64_t *addresses, uint64_t *context_hints, int max_frames, int timeout_ms,
                            uint64_t *stopped_ns);

/// What dladdr(3) knows of `address` in this process: returns 1 when a loaded object maps it, with its load base in
/// `image_base` and the name of the exported symbol containing (or preceding) it in `symbol` (NULL if none); 0 when
/// no object does. Not async-signal-safe: for the watcher thread, after a capture.
int sw_agent_describe_address(uint64_t address, uint64_t *image_base, const char **symbol);

/// CLOCK_MONOTONIC_COARSE in nanoseconds (a few ns to read; ticks every 1-4 ms).
uint64_t sw_agent_coarse_now_ns(void);
/// CLOCK_MONOTONIC in nanoseconds.
uint64_t sw_agent_now_ns(void);
/// The calling thread's kernel thread id.
pid_t sw_agent_gettid(void);

/// Whether the process's main thread has run its thread-exit destructors (`dispatchMain()` and an async `main`
/// call `pthread_exit` on it, and libdispatch then parks it in `sigsuspend`). CoreFoundation prints "Attempting to
/// add observer to main runloop, but the main thread has exited" into the workload's stderr for any observer,
/// timer or wake-up sent to the main run loop after that: the agent asks here first. Only known when the library's
/// constructor ran on the main thread (LD_PRELOAD, linked in); 0 otherwise.
int sw_agent_main_thread_exited(void);
/// Whether the kernel started this program in secure-execution mode (getauxval(AT_SECURE): set-user-ID, set-group-ID
/// or file capabilities): its environment was set by someone who may be less privileged than it, and the agent honours
/// none of it (see AgentEnvironment.honoured in StallwatchCore). 1 or 0.
int sw_agent_secure_execution(void);
/// The lock around library mode's start and stop (recursive: a handler called from stop() may stop again). A child
/// of fork() gets it new and unlocked, whichever thread held it in the parent.
void sw_agent_monitor_lock(void);
void sw_agent_monitor_unlock(void);
/// prctl(PR_SET_PTRACER, pid): lets `pid` ptrace this process under Yama ptrace_scope 1.
/// Returns 0 or a negative errno (-EINVAL when Yama is not active, which needs no such permission).
int sw_agent_set_ptracer(pid_t pid);
/// The path of the file this agent was loaded from (dladdr on one of its own functions), or NULL: library mode looks
/// for its capture helper beside it. (Swift's Glibc module has no dladdr.)
const char *sw_agent_library_path(void);
/// Sets (on != 0) or clears FD_CLOEXEC on `fd`. Returns 0 or a negative errno.
int sw_agent_set_cloexec(int fd, int on);

/// The file names of the shared libraries the program itself needs: the DT_NEEDED entries reachable from the
/// executable, matched to the loaded objects (what only LD_PRELOAD brought in is not among them). Writes them
/// NUL-separated into `buffer` (names that do not fit are left out) and returns how many it wrote, or -1.
int sw_agent_program_libraries(char *buffer, size_t size);
/// The main thread's CoreFoundation run loop if the program has made it, else NULL; never creates it.
/// `known` (if not NULL) is set to 0 when this CoreFoundation cannot be asked (then NULL says nothing).
void *sw_agent_existing_main_run_loop(int *known);
/// Calls `hook` once with the main run loop the moment the program first obtains it (on the thread that asked,
/// before the program can run it), if the preloaded agent's `_CFRunLoopGet0` stands in front of CoreFoundation's;
/// never otherwise. Replaces any hook not yet called; NULL cancels.
void sw_agent_on_main_run_loop(void (*hook)(void *loop));
/// Called on a thread other than the main one when it first runs its CoreFoundation run loop, with that loop
/// (a CFRunLoopRef); returns what to hand `sw_loop_thread_exiting_fn` when the thread exits, or NULL to leave the
/// thread alone.
typedef void *(*sw_loop_thread_started_fn)(void *loop);
/// Called on a watched loop thread as it exits (a thread-exit destructor), with what the start hook returned.
typedef void (*sw_loop_thread_exiting_fn)(void *watched);

/// Asks to hear of every thread that runs a run loop from now on (see loop_threads.c: the agent defines
/// CFRunLoopRunSpecific). Each thread is offered once, on its first run after this call.
void sw_agent_set_loop_thread_hooks(sw_loop_thread_started_fn started, sw_loop_thread_exiting_fn exiting);
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

/// Called on a thread other than the main one as it runs its first Swift concurrency job (see executor_jobs.c);
/// returns what to hand the job and exit hooks, or NULL to leave the thread alone.
typedef void *(*sw_executor_thread_started_fn)(void);
/// Called on a watched executor thread as a job begins (`begins` 1) and as it ends (0).
typedef void (*sw_executor_job_fn)(void *watched, int begins);
/// Called on a watched executor thread as it exits, with what the start hook returned.
typedef void (*sw_executor_thread_exiting_fn)(void *watched);

/// Asks to hear of every Swift concurrency job that the global executor runs from now on, on threads other than the
/// main one: each thread is offered once, at its first job after this call. No job is seen without a concurrency
/// runtime library (a program without Swift concurrency, or with its runtime linked in), nor where libdispatch's
/// definitions come before the agent's in the lookup.
void sw_agent_set_executor_hooks(
    sw_executor_thread_started_fn started, sw_executor_job_fn job, sw_executor_thread_exiting_fn exiting);
/// Stops offering threads; each watched one lets its watch go (through the exit hook) at its next job.
void sw_agent_stop_executor_hooks(void);

#ifdef __cplusplus
}
#endif

#endif
