// What the kernel keeps for each thread stallwatch watches through its event loop's waits: written by the BPF program
// (bpf/loop_trace.bpf.c) on the thread's syscalls, read by the watcher like an agent's activity board.
#ifndef SW_LOOP_TRACE_H
#define SW_LOOP_TRACE_H

#include <linux/types.h>

/// Where a watched thread is, as the kernel last saw it.
enum sw_trace_phase {
    /// No wait of the thread's has been seen yet: nothing to judge.
    SW_TRACE_UNSEEN = 0,
    /// In its loop's wait: idle.
    SW_TRACE_WAITING = 1,
    /// Out of the loop's wait, handling what woke it (or in a wait that is not the loop's): busy.
    SW_TRACE_BUSY = 2,
};

/// One watched thread's state (the value of the state map, keyed by its tid). Every field is written only by the
/// thread's own syscalls, so one thread's entry has one writer.
struct sw_trace_state {
    /// Transitions so far: a changed sequence means the loop moved.
    __u64 sequence;
    /// When the last transition happened, CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns).
    __u64 stamp_ns;
    /// An sw_trace_phase.
    __u32 phase;
    /// The syscall number of the last wait that was not the loop's (a nested wait, a zero-timeout poll), -1 before.
    __s32 other_wait_syscall;
    /// What the last idle wait waited on: the epoll descriptor, or for poll/select the set's first descriptor and size.
    __u64 wait_identity;
    /// Idle waits entered so far.
    __u64 waits;
    /// The control's `epoch` when the thread last moved, and when it first moved in that epoch: the watcher arms an
    /// epoch when it declares a stall, and the first move after that is the stall's end, however many follow.
    __u64 epoch_seen;
    __u64 first_move_ns;
};

/// What the watcher tells the program about one thread (the value of the control map, keyed by its tid).
struct sw_trace_control {
    /// The loop's own wait (an sw_trace_state wait_identity): a wait on anything else is not idle. 0: any wait.
    __u64 loop_identity;
    /// Raised to ask when the thread next moves (see sw_trace_state's first_move_ns).
    __u64 epoch;
};

/// The syscalls an event loop waits in (x86_64 numbers).
#define SW_NR_POLL 7
#define SW_NR_SELECT 23
#define SW_NR_EPOLL_WAIT 232
#define SW_NR_PSELECT6 270
#define SW_NR_PPOLL 271
#define SW_NR_EPOLL_PWAIT 281
#define SW_NR_EPOLL_PWAIT2 441

/// Most threads one trace watches at once.
#define SW_TRACE_MAX_THREADS 16384

#endif
