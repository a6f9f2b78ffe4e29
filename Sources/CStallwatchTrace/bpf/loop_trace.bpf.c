// The kernel side of the trace source: on the entry and exit of the syscalls an event loop waits in, for the threads
// stallwatch watches (the keys of `states`), record whether the thread is in its loop's wait or out of it, and since
// when. Raw tracepoints (sys_enter, sys_exit): attached by name, no tracefs needed, and detached when stallwatch's
// descriptors close, however it exits. Built with the toolchain's clang by Scripts/build-trace-program.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "sw_loop_trace.h"

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, SW_TRACE_MAX_THREADS);
    __type(key, __u32);
    __type(value, struct sw_trace_state);
} states SEC(".maps");

/// What the watcher says about each thread: its loop's wait, learned, and the epoch it armed.
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, SW_TRACE_MAX_THREADS);
    __type(key, __u32);
    __type(value, struct sw_trace_control);
} controls SEC(".maps");

// struct pt_regs on x86_64: the syscall's arguments are in rdi, rsi, rdx, r10, r8; its number in orig_ax.
#define REG_R10 56
#define REG_R8 72
#define REG_DX 96
#define REG_SI 104
#define REG_DI 112
#define REG_ORIG_AX 120

static __always_inline __u64 reg(const void *regs, int offset) {
    __u64 value = 0;
    bpf_probe_read_kernel(&value, sizeof(value), (const char *)regs + offset);
    return value;
}

static __always_inline int is_wait(long id) {
    return id == SW_NR_EPOLL_WAIT || id == SW_NR_EPOLL_PWAIT || id == SW_NR_EPOLL_PWAIT2 || id == SW_NR_POLL ||
           id == SW_NR_PPOLL || id == SW_NR_SELECT || id == SW_NR_PSELECT6;
}

/// Whether a timeout given as a pointer to {seconds, nanoseconds} (timespec or timeval) is zero; NULL waits for ever.
static __always_inline int zero_time(__u64 pointer) {
    if (pointer == 0) return 0;
    __s64 time[2] = {1, 1};
    if (bpf_probe_read_user(time, sizeof(time), (const void *)pointer) != 0) return 0;
    return time[0] == 0 && time[1] == 0;
}

/// A poll set's identity: its first descriptor and its size (a loop polls the same set again and again).
static __always_inline __u64 poll_identity(__u64 fds, __u64 count) {
    __s32 first = -1;
    if (fds != 0) bpf_probe_read_user(&first, sizeof(first), (const void *)fds);
    return ((__u64)(__u32)first << 32) | (count & 0xffffffff) | (1ull << 63);
}

/// The thread moved to `phase` now.
static __always_inline void move(struct sw_trace_state *state, const struct sw_trace_control *control, __u32 phase) {
    __u64 now = bpf_ktime_get_ns();
    if (control != 0 && state->epoch_seen != control->epoch) {
        state->epoch_seen = control->epoch;
        state->first_move_ns = now;
    }
    state->phase = phase;
    state->stamp_ns = now;
    state->sequence += 1;
}

SEC("raw_tracepoint/sys_enter")
int sw_wait_enter(struct bpf_raw_tracepoint_args *context) {
    long id = (long)context->args[1];
    if (!is_wait(id)) return 0;
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct sw_trace_state *state = bpf_map_lookup_elem(&states, &tid);
    if (state == 0) return 0;
    const void *regs = (const void *)context->args[0];
    __u64 identity = 0;
    int zero = 0;
    if (id == SW_NR_EPOLL_WAIT || id == SW_NR_EPOLL_PWAIT) {
        identity = reg(regs, REG_DI);
        zero = (__s32)reg(regs, REG_R10) == 0;
    } else if (id == SW_NR_EPOLL_PWAIT2) {
        identity = reg(regs, REG_DI);
        zero = zero_time(reg(regs, REG_R10));
    } else if (id == SW_NR_POLL) {
        identity = poll_identity(reg(regs, REG_DI), reg(regs, REG_SI));
        zero = (__s32)reg(regs, REG_DX) == 0;
    } else if (id == SW_NR_PPOLL) {
        identity = poll_identity(reg(regs, REG_DI), reg(regs, REG_SI));
        zero = zero_time(reg(regs, REG_DX));
    } else {
        // select and pselect6: the set's size stands for it.
        identity = (2ull << 62) | reg(regs, REG_DI);
        zero = zero_time(reg(regs, REG_R8));
    }
    struct sw_trace_control *control = bpf_map_lookup_elem(&controls, &tid);
    if (zero || (control != 0 && control->loop_identity != 0 && control->loop_identity != identity)) {
        // A zero-timeout poll is a look, not a rest; a wait on another set is the handler's, not the loop's.
        state->other_wait_syscall = (__s32)id;
        return 0;
    }
    state->wait_identity = identity;
    state->waits += 1;
    move(state, control, SW_TRACE_WAITING);
    return 0;
}

SEC("raw_tracepoint/sys_exit")
int sw_wait_exit(struct bpf_raw_tracepoint_args *context) {
    // Every syscall of the machine passes here: the syscall's number first, the map only for a wait.
    long id = (long)reg((const void *)context->args[0], REG_ORIG_AX);
    if (!is_wait(id)) return 0;
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct sw_trace_state *state = bpf_map_lookup_elem(&states, &tid);
    if (state == 0) return 0;
    // Only a thread that was resting, or not seen yet, changes here; every other exit is the same busy stretch.
    if (state->phase == SW_TRACE_BUSY) return 0;
    if (state->phase == SW_TRACE_UNSEEN && state->other_wait_syscall == (__s32)id) return 0;
    move(state, bpf_map_lookup_elem(&controls, &tid), SW_TRACE_BUSY);
    return 0;
}
