// In-process stack capture: a real-time signal to the thread to capture, whose handler unwinds its own stack with
// libunwind (loaded with dlopen, never linked: see signal_capture.c).
#ifndef SW_SIGNAL_CAPTURE_H
#define SW_SIGNAL_CAPTURE_H

#include <stdint.h>
#include <sys/types.h>

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

#endif
