// Remote (ptrace) stack capture for stallwatch: stop one thread of another process for a fraction of a
// millisecond, unwind it with libunwind-ptrace, let it go. Only plain C types cross this header.
#ifndef C_STALLWATCH_UNWIND_H
#define C_STALLWATCH_UNWIND_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
    int status;              ///< one of SW_REMOTE_*
    int error_number;        ///< errno of the failing call, 0 if none
    int wait_status;         ///< raw wait status when status == SW_REMOTE_EXITED
    int frame_count;         ///< frames written to `addresses`
    /// A stack deeper than `max_frames`: its innermost `frame_count - outer_frames` frames come first, then (after
    /// `omitted_frames` left out) its `outer_frames` outermost ones, as far as the walk went (`walk_limited`).
    int omitted_frames;
    int outer_frames;
    int walk_limited;        ///< 1 if the walk stopped at SW_REMOTE_WALK_LIMIT frames, short of the outermost
    int unwind_error;        ///< libunwind's last code (<0 = the walk ended early on UNW_E*), 0 = clean end
    int reached_vdso;        ///< 1 if a frame lay in the target's [vdso] (the vDSO unwind fix was used)
    int redelivered_signal;  ///< a signal that arrived while stopping and was handed back on detach, or 0
    int file_table_lookups;  ///< frames whose unwind table was read from the image's file, not the target's memory
    int debug_frame_steps;   ///< frames left by their image's .debug_frame rules (libunwind had none for them)
    uint64_t stopped_ns;     ///< CLOCK_MONOTONIC from before PTRACE_INTERRUPT to after PTRACE_DETACH
    uint64_t total_ns;       ///< whole call, including attach and the per-process setup
    uint64_t stop_wait_ns;   ///< part of stopped_ns spent waiting for the thread to stop
    uint64_t unwind_ns;      ///< part of stopped_ns spent reading registers and unwinding
    const char *failed_call; ///< static string naming the failing call, or NULL
} sw_remote_result;

/// An unwinder for remote threads: one libunwind address space with a global cache that makes
/// repeated captures of the same process fast. Not thread-safe: use one per capturing thread.
/// ptrace ties a tracee to the tracer *thread*, so after a timed-out capture the next call and the
/// destroy must come from the same OS thread.
///
/// While a thread is being captured this process is its tracer, and a waitpid() in any thread of
/// this process that covers it (even without WUNTRACED) can consume the stop the capture waits for:
/// reap children with __WNOTHREAD from the thread that spawned them, or not during a capture.
typedef struct sw_remote_sampler sw_remote_sampler;

/// Returns NULL when out of memory or libunwind cannot create an address space.
sw_remote_sampler *sw_remote_sampler_create(void);
void sw_remote_sampler_destroy(sw_remote_sampler *sampler);

/// Makes the sampler look each frame's unwind table up in the target's memory (its loaded `.eh_frame_hdr`)
/// before opening the image's file. Preparing a process then costs a few small reads per image instead of
/// opening and mapping every file, but each capture reads the tables while the thread is stopped: right for a
/// single capture, not for many of the same process. Files are still opened for images without such a table.
void sw_remote_sampler_read_tables_from_memory(sw_remote_sampler *sampler);

/// Stops thread `tid` of process `pid`, unwinds it, resumes it.
///
/// `addresses[0]` is the interrupted program counter; the following entries are return addresses
/// (the instruction after each call), so a symbolicator should look up `address - 1` for them.
/// `timeout_ms` bounds the wait for the thread to stop (0 = 1000 ms).
///
/// `context_hints`, if not NULL, holds 2 * `max_frames` words and receives, for each frame, where a Swift async
/// function running in it keeps its async context: `[2k]` the word its async frame record holds just below its frame
/// pointer (0 when frame k has no frame record), `[2k+1]` its r14 (the register the swiftasync convention passes the
/// context in). Read while the thread is stopped because the stack changes the moment it runs again; what they point
/// at is on the heap and is read after the release (docs/how-it-works.md, "Async callers").
/// Returns `result->status`.
int sw_remote_capture(sw_remote_sampler *sampler, int pid, int tid, uint64_t *addresses, uint64_t *context_hints,
                      int max_frames, int timeout_ms, sw_remote_result *result);

/// Forgets cached unwind rules (call when the target may have loaded or unloaded libraries at
/// addresses seen before; switching to another pid does this by itself).
void sw_remote_sampler_flush(sw_remote_sampler *sampler);

#ifdef __cplusplus
}
#endif

#endif
