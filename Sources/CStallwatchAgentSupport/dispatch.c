// Stand-ins for libdispatch's functions through which Swift concurrency's runtime hands every job to a worker
// thread: an immediate job with dispatch_async_f(queue, job, runner), a delayed one with dispatch_after_f(when, queue,
// job, runner), one with leeway through a timer source's dispatch_source_set_event_handler_f(source, handler). The
// concurrency runtime (libswift_Concurrency.so) calls them through its PLT, so the preloaded agent's come first; each
// hands its work to the executor-job hooks (executor_jobs.c), which swap the runtime's runner for a trampoline while
// jobs are watched, and on to libdispatch's own (sw_originals.h). Every other caller's work goes through as it came.
#define _GNU_SOURCE
#include "sw_originals.h"
#include "sw_stand_in_hooks.h"

__attribute__((visibility("default"))) void dispatch_async_f(void *queue, void *context, sw_work_fn work) {
    SW_ORIGINAL(dispatch_async_f)(queue, context, sw_executor_job_work(work));
}

__attribute__((visibility("default"))) void dispatch_after_f(uint64_t when, void *queue, void *context,
                                                             sw_work_fn work) {
    SW_ORIGINAL(dispatch_after_f)(when, queue, context, sw_executor_job_work(work));
}

__attribute__((visibility("default"))) void dispatch_source_set_event_handler_f(void *source, sw_work_fn handler) {
    SW_ORIGINAL(dispatch_source_set_event_handler_f)(source, sw_executor_source_handler(handler));
}
