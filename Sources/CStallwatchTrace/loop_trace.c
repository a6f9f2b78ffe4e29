// Why C: libbpf is a C library of opaque handles and variadic logging, and the program's object is embedded with
// #embed. The program itself is bpf/loop_trace.bpf.c, built into loop_trace.bpf.o by Scripts/build-trace-program.
#define _GNU_SOURCE
#include "CStallwatchTrace.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// #embed is C23; the toolchain's clang takes it in C17 mode too, with a warning that says so.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc23-extensions"
static const unsigned char program_object[] = {
#embed "loop_trace.bpf.o"
};
#pragma clang diagnostic pop

struct sw_trace {
    struct bpf_object *object;
    struct bpf_link *enter;
    struct bpf_link *exit;
    int states;
    int controls;
};

// libbpf prints its own diagnostics to stderr by default: stallwatch says what failed in one line instead.
static int quiet(enum libbpf_print_level level, const char *format, va_list arguments) {
    (void)level;
    (void)format;
    (void)arguments;
    return 0;
}

static int fail(struct sw_trace *trace, int code, char *error, size_t size, const char *what) {
    if (error != NULL && size > 0) snprintf(error, size, "%s: %s", what, strerror(-code));
    sw_trace_close(trace);
    return code;
}

int sw_trace_open(struct sw_trace **result, char *error, size_t error_size) {
    *result = NULL;
    libbpf_set_print(quiet);
    struct sw_trace *trace = calloc(1, sizeof(*trace));
    if (trace == NULL) return -ENOMEM;
    trace->states = trace->controls = -1;
    trace->object = bpf_object__open_mem(program_object, sizeof(program_object), NULL);
    int code = libbpf_get_error(trace->object);
    if (code != 0) {
        trace->object = NULL;
        return fail(trace, code, error, error_size, "the trace program could not be read");
    }
    code = bpf_object__load(trace->object);
    if (code != 0) return fail(trace, code, error, error_size, "the trace program could not be loaded");
    struct bpf_program *enter = bpf_object__find_program_by_name(trace->object, "sw_wait_enter");
    struct bpf_program *exit = bpf_object__find_program_by_name(trace->object, "sw_wait_exit");
    if (enter == NULL || exit == NULL)
        return fail(trace, -ENOENT, error, error_size, "the trace program is incomplete");
    trace->enter = bpf_program__attach_raw_tracepoint(enter, "sys_enter");
    code = libbpf_get_error(trace->enter);
    if (code != 0) {
        trace->enter = NULL;
        return fail(trace, code, error, error_size, "the sys_enter tracepoint could not be attached");
    }
    trace->exit = bpf_program__attach_raw_tracepoint(exit, "sys_exit");
    code = libbpf_get_error(trace->exit);
    if (code != 0) {
        trace->exit = NULL;
        return fail(trace, code, error, error_size, "the sys_exit tracepoint could not be attached");
    }
    trace->states = bpf_object__find_map_fd_by_name(trace->object, "states");
    trace->controls = bpf_object__find_map_fd_by_name(trace->object, "controls");
    if (trace->states < 0 || trace->controls < 0)
        return fail(trace, -ENOENT, error, error_size, "the trace maps are missing");
    *result = trace;
    return 0;
}

int sw_trace_watch(struct sw_trace *trace, pid_t tid) {
    __u32 key = (__u32)tid;
    struct sw_trace_state state = {.phase = SW_TRACE_UNSEEN, .other_wait_syscall = -1};
    // BPF_NOEXIST: a thread already followed keeps what was seen of it.
    if (bpf_map_update_elem(trace->states, &key, &state, BPF_NOEXIST) != 0 && errno != EEXIST) return -errno;
    return 0;
}

int sw_trace_mark_waiting(struct sw_trace *trace, pid_t tid) {
    __u32 key = (__u32)tid;
    struct sw_trace_state state;
    if (bpf_map_lookup_elem(trace->states, &key, &state) != 0) return -errno;
    if (state.sequence != 0 || state.phase != SW_TRACE_UNSEEN) return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);  // bpf_ktime_get_ns's clock
    state.phase = SW_TRACE_WAITING;
    state.stamp_ns = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec;
    state.sequence = 1;
    return bpf_map_update_elem(trace->states, &key, &state, BPF_EXIST) == 0 ? 0 : -errno;
}

void sw_trace_unwatch(struct sw_trace *trace, pid_t tid) {
    __u32 key = (__u32)tid;
    bpf_map_delete_elem(trace->states, &key);
    bpf_map_delete_elem(trace->controls, &key);
}

int sw_trace_read_all(struct sw_trace *trace, uint32_t *tids, struct sw_trace_state *states, uint32_t capacity) {
    uint32_t total = 0;
    __u32 token = 0;
    void *from = NULL;  // the first batch starts at the map's beginning
    while (total < capacity) {
        __u32 count = capacity - total;
        int code = bpf_map_lookup_batch(trace->states, from, &token, tids + total, states + total, &count, NULL);
        total += count;
        if (code != 0) {
            // ENOENT: the last batch, which may hold entries too.
            if (errno == ENOENT) break;
            return -errno;
        }
        from = &token;
    }
    return (int)total;
}

int sw_trace_control(struct sw_trace *trace, pid_t tid, struct sw_trace_control control) {
    __u32 key = (__u32)tid;
    return bpf_map_update_elem(trace->controls, &key, &control, BPF_ANY) == 0 ? 0 : -errno;
}

void sw_trace_close(struct sw_trace *trace) {
    if (trace == NULL) return;
    bpf_link__destroy(trace->enter);
    bpf_link__destroy(trace->exit);
    bpf_object__close(trace->object);
    free(trace);
}
