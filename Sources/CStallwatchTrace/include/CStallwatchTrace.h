// The trace source's loader: the BPF program that follows watched threads in and out of their loop's waits, loaded and
// attached through libbpf, and its per-thread state read back. Only plain C types cross this header.
#ifndef C_STALLWATCH_TRACE_H
#define C_STALLWATCH_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sw_loop_trace.h"

/// A loaded and attached trace; detached when closed or when the process's descriptors close (any exit).
struct sw_trace;

/// Loads the program and attaches it to the raw sys_enter and sys_exit tracepoints. Returns 0, or a negative errno
/// (-EPERM: not permitted, which wants root or CAP_BPF and CAP_PERFMON) with a line in `error` saying what failed.
int sw_trace_open(struct sw_trace **trace, char *error, size_t error_size);
/// Starts following thread `tid` (by its id in the kernel's initial pid namespace). Returns 0 or a negative errno.
int sw_trace_watch(struct sw_trace *trace, pid_t tid);
/// Records that `tid`, followed but not seen to move yet, rests in its loop's wait now (it entered it before it was
/// followed, as /proc shows). A thread that moved meanwhile keeps what the kernel recorded. Returns 0 or a negative errno.
int sw_trace_mark_waiting(struct sw_trace *trace, pid_t tid);
/// Stops following `tid`.
void sw_trace_unwatch(struct sw_trace *trace, pid_t tid);
/// Copies every followed thread's state at once (one batch lookup, however many threads): up to `capacity` tids and
/// states. Returns how many, or a negative errno.
int sw_trace_read_all(struct sw_trace *trace, uint32_t *tids, struct sw_trace_state *states, uint32_t capacity);
/// Tells the program about `tid`: its loop's wait (only waits on it are idle from now on; 0: any) and the epoch whose
/// first move it records. Returns 0 or a negative errno.
int sw_trace_control(struct sw_trace *trace, pid_t tid, struct sw_trace_control control);
/// Detaches and unloads.
void sw_trace_close(struct sw_trace *trace);

#endif
