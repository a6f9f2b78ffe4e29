// What one remote capture did: its outcome, what it found and how long the target was stopped.
#ifndef SW_REMOTE_RESULT_H
#define SW_REMOTE_RESULT_H

#include <stdint.h>

/// Outcome of `sw_remote_capture` (`sw_remote_result.status`).
#define SW_REMOTE_OK 0
/// PTRACE_SEIZE said EPERM/EACCES: no CAP_SYS_PTRACE, other user, yama, or already traced (gdb, strace).
#define SW_REMOTE_PERMISSION_DENIED 1
/// The pid/tid does not exist (ESRCH), or is a zombie whose exit status this process may not see.
#define SW_REMOTE_NO_SUCH_THREAD 2
/// The thread exited or was killed, before or during the capture. `wait_status` holds the raw wait
/// status (WIFEXITED/WEXITSTATUS/WIFSIGNALED apply). The process is NOT reaped: a parent still gets
/// the same status from its own waitpid.
#define SW_REMOTE_EXITED 3
/// The thread did not stop within the timeout (uninterruptible sleep, e.g. vfork or disk I/O).
/// The sampler stays its tracer and detaches it once it stops: at the next capture (which fails
/// with EBUSY until then) or on destroy (which waits up to 1 s for it).
#define SW_REMOTE_TIMED_OUT 4
/// Anything else; `failed_call` names the call that failed and `error_number` its errno.
#define SW_REMOTE_FAILED 5

/// The most frames one capture walks, to keep the outermost ones of a deep stack: a bound on the stop.
#define SW_REMOTE_WALK_LIMIT 16384

/// What one capture did and how long the target was stopped.
typedef struct sw_remote_result {
    int status;        ///< one of SW_REMOTE_*
    int error_number;  ///< errno of the failing call, 0 if none
    int wait_status;   ///< raw wait status when status == SW_REMOTE_EXITED
    int frame_count;   ///< frames written to `addresses`
    /// A stack deeper than `max_frames`: its innermost `frame_count - outer_frames` frames come first, then (after
    /// `omitted_frames` left out) its `outer_frames` outermost ones, as far as the walk went (`walk_limited`).
    int omitted_frames;
    int outer_frames;
    int walk_limited;         ///< 1 if the walk stopped at SW_REMOTE_WALK_LIMIT frames, short of the outermost
    int unwind_error;         ///< libunwind's last code (<0 = the walk ended early on UNW_E*), 0 = clean end
    int reached_vdso;         ///< 1 if a frame lay in the target's [vdso] (the vDSO unwind fix was used)
    int redelivered_signal;   ///< a signal that arrived while stopping and was handed back on detach, or 0
    int file_table_lookups;   ///< frames whose unwind table was read from the image's file, not the target's memory
    int debug_frame_steps;    ///< frames left by their image's .debug_frame rules (libunwind had none for them)
    uint64_t stopped_ns;      ///< CLOCK_MONOTONIC from before PTRACE_INTERRUPT to after PTRACE_DETACH
    uint64_t total_ns;        ///< whole call, including attach and the per-process setup
    uint64_t stop_wait_ns;    ///< part of stopped_ns spent waiting for the thread to stop
    uint64_t unwind_ns;       ///< part of stopped_ns spent reading registers and unwinding
    const char *failed_call;  ///< static string naming the failing call, or NULL
} sw_remote_result;

#endif
