// Swift concurrency's jobs on executor threads, bracketed by the agent's libdispatch stand-ins (executor_jobs.c).
#ifndef SW_EXECUTOR_JOBS_H
#define SW_EXECUTOR_JOBS_H

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
void sw_agent_set_executor_hooks(sw_executor_thread_started_fn started, sw_executor_job_fn job,
                                 sw_executor_thread_exiting_fn exiting);
/// Stops offering threads; each watched one lets its watch go (through the exit hook) at its next job.
void sw_agent_stop_executor_hooks(void);

#endif
