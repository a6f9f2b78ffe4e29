// Remote (ptrace) stack capture for stallwatch: stop one thread of another process for a fraction of a
// millisecond, unwind it with libunwind-ptrace, let it go. Only plain C types cross this header.
#ifndef C_STALLWATCH_UNWIND_H
#define C_STALLWATCH_UNWIND_H

#include "sw_remote_result.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
