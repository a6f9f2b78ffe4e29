// What the agent knows of the process it is loaded into, set up by its load hook (load_hook.c) or asked of the system
// where Swift's Glibc module cannot: clocks, thread ids, the main thread's exit, secure execution, the monitor lock.
#ifndef SW_AGENT_PROCESS_H
#define SW_AGENT_PROCESS_H

#include <stdint.h>
#include <sys/types.h>

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

#endif
