// Remote stack capture: PTRACE_SEIZE + PTRACE_INTERRUPT one thread, unwind it with libunwind-ptrace,
// PTRACE_DETACH. In C because libunwind's API is macros (unw_* expand to _Ux86_64_*), and because
// the stop window must hold nothing but syscalls and unwinding.
//
// How the stop window is kept short (the target is stopped from PTRACE_INTERRUPT to PTRACE_DETACH):
// - one libunwind address space per sampler with UNW_CACHE_GLOBAL, so a warm capture replays cached
//   unwind rules instead of re-reading .eh_frame;
// - per-process work happens before the thread is stopped: finding the vDSO, and opening every code
//   image's ELF file and unwind table (remote_images.c);
// - registers come from one PTRACE_GETREGS instead of a PTRACE_PEEKUSER per register, and memory
//   from process_vm_readv a page at a time instead of a PTRACE_PEEKDATA per word;
// - the wait for the stop polls instead of sleeping in waitid (see await_event).
#define _GNU_SOURCE
#include "CStallwatchUnwind.h"
#include "sw_unwind_internal.h"
#include "sw_capture_rules.h"

#include <errno.h>
#include <libunwind-ptrace.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
    PAGE = 4096,
    CACHED_PAGES = 32,
    SPIN_NS = 15000,  // busy-poll this long for the stop before sleeping between polls
    POLL_NS = 10000,  // then poll this often
};

/// A page of the target's memory (its stack, or an unwind table). Valid only while the thread stays
/// stopped: the cache is emptied at every capture.
typedef struct {
    uint64_t address;  // page-aligned; 0 = empty
    uint8_t bytes[PAGE];
} cached_page;

struct sw_remote_sampler {
    unw_addr_space_t space;
    unw_accessors_t accessors;
    int pid;                 // the process the caches describe, 0 = none
    int images_stale;        // a frame lay outside every known image: re-read the maps next time
    int tables_from_memory;  // look unwind tables up in the target's memory first, opening no files
    int file_table_lookups;  // during an unwind: lookups answered from images' files
    int pending_tid;         // a thread still owed a PTRACE_DETACH after a timeout, 0 = none
    void *upt;               // _UPT_create(tid) for the thread being captured: registers, memory, fallback
    int upt_tid;
    sw_vdso_target vdso;
    sw_images images;
    struct user_regs_struct regs;
    int regs_valid;
    // During a step: the last address no unwind table covered (+1, so 0 is none). libunwind then guesses the caller
    // its own way, which for a frame-pointer function without CFI lands beside the real frame (see `unwind`).
    uint64_t uncovered_ip;
    int next_victim;
    cached_page pages[CACHED_PAGES];
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// MARK: - Accessors
// _UPT_accessors, wrapped. libunwind hands each callback the `arg` it was given, and
// _UPT_find_proc_info passes its own handle on as that `arg`, so `arg` must stay a _UPT handle; the
// sampler doing the unwind is found through a thread-local instead (ptrace requests must come from
// the tracing thread anyway). put_unwind_info, get_dyn_info_list_addr, access_fpreg, resume and
// get_proc_name stay _UPT's. In particular libunwind itself frees the table-format unwind info that
// _UPT_find_proc_info and the vDSO lookup return (they come from its internal pool); it only calls
// put_unwind_info for dynamically registered (JIT) info.

static __thread sw_remote_sampler *unwinding;

static int sw_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *arg) {
    sw_remote_sampler *s = unwinding;
    if (s == NULL) return _UPT_find_proc_info(as, ip, pi, need_unwind_info, arg);
    if (s->vdso.valid && ip >= s->vdso.start && ip < s->vdso.end)
        return sw_vdso_find_proc_info(&s->vdso, as, ip, pi, need_unwind_info, arg);
    if (s->tables_from_memory) {
        sw_image *mapped = sw_images_find(&s->images, ip);
        int found = mapped != NULL ? sw_memory_find_proc_info(mapped, as, ip, pi, need_unwind_info, arg) : -UNW_ENOINFO;
        if (found >= 0) return found;
    }
    s->file_table_lookups++;
    void *image = sw_images_handle(&s->images, ip);
    if (image == NULL) {
        s->images_stale = 1;  // loaded after we read the maps; the per-thread handle finds it (slowly)
        image = s->upt;
    }
    int found = _UPT_find_proc_info(as, ip, pi, need_unwind_info, image);
    // A file libunwind could not open (replaced or deleted since the process started, or in another mount
    // namespace): its unwind table is still mapped in the target. (Already asked above when memory comes first.)
    sw_image *mapped = found < 0 && !s->tables_from_memory ? sw_images_find(&s->images, ip) : NULL;
    if (mapped != NULL) found = sw_memory_find_proc_info(mapped, as, ip, pi, need_unwind_info, arg);
    if (found < 0) s->uncovered_ip = ip + 1;
    return found;
}

/// The target's page at `page` (page-aligned), from the cache or read with process_vm_readv, which works on a
/// running process too; NULL if it cannot be read that way.
static const uint8_t *target_page(sw_remote_sampler *s, uint64_t page) {
    for (int i = 0; i < CACHED_PAGES; i++) {
        if (s->pages[i].address == page) return s->pages[i].bytes;
    }
    cached_page *slot = &s->pages[s->next_victim];
    struct iovec local = {slot->bytes, PAGE}, remote = {(void *)(uintptr_t)page, PAGE};
    if (process_vm_readv(s->pid, &local, 1, &remote, 1, 0) != PAGE) return NULL;
    slot->address = page;
    s->next_victim = (s->next_victim + 1) % CACHED_PAGES;
    return slot->bytes;
}

static int sw_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *value, int write, void *arg) {
    sw_remote_sampler *s = unwinding;
    if (s == NULL) return _UPT_access_mem(as, addr, value, write, arg);
    // Image handles were created for the pid; only the stopped thread accepts PTRACE_PEEKDATA, so the pages are
    // read with process_vm_readv, which also serves the table lookups made before the thread is stopped.
    if (write) return _UPT_access_mem(as, addr, value, write, s->upt);
    // The target's vDSO holds the same bytes as ours.
    // Written so that no sum can wrap: addr is the target's register or stack value, anything up to UINT64_MAX.
    if (s->vdso.valid && addr >= s->vdso.start && s->vdso.end - s->vdso.start >= sizeof(unw_word_t) &&
        addr - s->vdso.start <= s->vdso.end - s->vdso.start - sizeof(unw_word_t)) {
        memcpy(value, s->vdso.local + (addr - s->vdso.start), sizeof *value);
        return 0;
    }
    uint64_t offset = addr & (PAGE - 1), page = addr - offset;
    uint8_t bytes[sizeof(unw_word_t)];
    size_t here = PAGE - offset < sizeof bytes ? PAGE - offset : sizeof bytes;
    const uint8_t *first = target_page(s, page);
    if (first == NULL) return _UPT_access_mem(as, addr, value, write, s->upt);
    memcpy(bytes, first + offset, here);
    // A word across a page boundary (an unwind table is only 4-byte aligned): the rest from the next page.
    if (here < sizeof bytes) {
        // The last page of the address space has no next page.
        const uint8_t *second = page > UINT64_MAX - PAGE ? NULL : target_page(s, page + PAGE);
        if (second == NULL) return _UPT_access_mem(as, addr, value, write, s->upt);
        memcpy(bytes + here, second, sizeof bytes - here);
    }
    memcpy(value, bytes, sizeof *value);
    return 0;
}

static int sw_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *value, int write, void *arg) {
    sw_remote_sampler *s = unwinding;
    if (s == NULL) return _UPT_access_reg(as, reg, value, write, arg);
    if (!write && s->regs_valid) {
        const struct user_regs_struct *r = &s->regs;
        switch (reg) {
        case UNW_X86_64_RAX: *value = r->rax; return 0;
        case UNW_X86_64_RDX: *value = r->rdx; return 0;
        case UNW_X86_64_RCX: *value = r->rcx; return 0;
        case UNW_X86_64_RBX: *value = r->rbx; return 0;
        case UNW_X86_64_RSI: *value = r->rsi; return 0;
        case UNW_X86_64_RDI: *value = r->rdi; return 0;
        case UNW_X86_64_RBP: *value = r->rbp; return 0;
        case UNW_X86_64_RSP: *value = r->rsp; return 0;
        case UNW_X86_64_R8: *value = r->r8; return 0;
        case UNW_X86_64_R9: *value = r->r9; return 0;
        case UNW_X86_64_R10: *value = r->r10; return 0;
        case UNW_X86_64_R11: *value = r->r11; return 0;
        case UNW_X86_64_R12: *value = r->r12; return 0;
        case UNW_X86_64_R13: *value = r->r13; return 0;
        case UNW_X86_64_R14: *value = r->r14; return 0;
        case UNW_X86_64_R15: *value = r->r15; return 0;
        case UNW_X86_64_RIP: *value = r->rip; return 0;
        default: break;
        }
    }
    return _UPT_access_reg(as, reg, value, write, s->upt);
}

// MARK: - Sampler

sw_remote_sampler *sw_remote_sampler_create(void) {
    sw_remote_sampler *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->accessors = _UPT_accessors;
    s->accessors.find_proc_info = sw_find_proc_info;
    s->accessors.access_mem = sw_access_mem;
    s->accessors.access_reg = sw_access_reg;
    s->space = unw_create_addr_space(&s->accessors, 0);
    if (s->space == NULL) {
        free(s);
        return NULL;
    }
    unw_set_caching_policy(s->space, UNW_CACHE_GLOBAL);
    return s;
}

void sw_remote_sampler_read_tables_from_memory(sw_remote_sampler *s) { s->tables_from_memory = 1; }

void sw_remote_sampler_flush(sw_remote_sampler *s) {
    unw_flush_cache(s->space, 0, 0);
    sw_images_clear(&s->images);
    if (s->upt != NULL) _UPT_destroy(s->upt);
    s->upt = NULL;
    s->upt_tid = 0;
    s->pid = 0;
}

/// Peeks at the next wait event of `tid` without consuming it. Returns 1 and fills `info` if there
/// is one, 0 if none yet, -1 on error (errno).
static int peek_event(int tid, siginfo_t *info) {
    memset(info, 0, sizeof *info);
    if (waitid(P_PID, (id_t)tid, info, WEXITED | WSTOPPED | __WALL | WNOHANG | WNOWAIT) != 0) return -1;
    return info->si_pid == tid;
}

/// Rebuilds the raw `waitpid` status from a waitid() report.
static int raw_wait_status(const siginfo_t *info) {
    switch (info->si_code) {
    case CLD_EXITED: return (info->si_status & 0xff) << 8;
    case CLD_KILLED: return info->si_status & 0x7f;
    case CLD_DUMPED: return (info->si_status & 0x7f) | 0x80;
    default: return (info->si_status << 8) | 0x7f;  // stopped or trapped (with the ptrace event bits)
    }
}

/// Reads "/proc/<pid>/task/<tid>/stat" and returns the state letter and parent pid that follow the
/// command name, which may itself hold spaces and parentheses. Returns 0 if the thread is gone.
static char thread_state(int pid, int tid, int *ppid) {
    char path[96], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    FILE *f = fopen(path, "re");
    if (f == NULL) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *close = strrchr(buf, ')');
    char state;
    int parent = -1;
    if (close == NULL || sscanf(close + 1, " %c %d", &state, &parent) < 1) return 0;
    if (ppid != NULL) *ppid = parent;
    return state;
}

static int is_exit(const siginfo_t *info) {
    return info->si_code == CLD_EXITED || info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED;
}

/// A traced thread has exited (`info` is its peeked report). Consumes the report unless this
/// process is the real parent of a dying process, so the exit status is never lost: a real parent
/// still collects it with waitpid, and for anyone else consuming it is what passes it on to the
/// real parent (a zombie tracee is reported to its tracer first).
static void settle_exit(int pid, int tid, const siginfo_t *info, sw_remote_result *r) {
    r->status = SW_REMOTE_EXITED;
    r->wait_status = raw_wait_status(info);
    int ppid = -1;
    if (tid == pid && thread_state(pid, pid, &ppid) != 0 && ppid == getpid()) return;
    siginfo_t ignored;
    waitid(P_PID, (id_t)tid, &ignored, WEXITED | __WALL | WNOHANG);
}

/// Detaches a thread whose earlier capture timed out, if it has stopped meanwhile. Returns 1 when
/// nothing is pending any more.
static int settle_pending(sw_remote_sampler *s) {
    if (s->pending_tid == 0) return 1;
    siginfo_t info;
    int got = peek_event(s->pending_tid, &info);
    if (got < 0) {
        s->pending_tid = 0;  // ECHILD: no longer ours
    } else if (got == 0) {
        // Stopped, but someone else's waitpid took the notification: detach all the same.
        if (thread_state(s->pid, s->pending_tid, NULL) == 't' && ptrace(PTRACE_DETACH, s->pending_tid, 0, 0) == 0)
            s->pending_tid = 0;
    } else {
        if (is_exit(&info)) {
            sw_remote_result ignored;
            settle_exit(s->pid, s->pending_tid, &info, &ignored);
        } else {
            waitid(P_PID, (id_t)s->pending_tid, &info, WSTOPPED | __WALL | WNOHANG);
            int event = info.si_status >> 8, sig = info.si_status & 0x7f;
            ptrace(PTRACE_DETACH, s->pending_tid, 0, (void *)(uintptr_t)(event == 0 ? sig : 0));
        }
        s->pending_tid = 0;
    }
    return s->pending_tid == 0;
}

void sw_remote_sampler_destroy(sw_remote_sampler *s) {
    if (s == NULL) return;
    // A thread left pending would sit in a trace stop, once it stops, until this thread exits.
    for (int tries = 0; tries < 1000 && !settle_pending(s); tries++) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    sw_remote_sampler_flush(s);
    unw_destroy_addr_space(s->space);
    free(s);
}

static int fail(sw_remote_result *r, const char *call, int error_number) {
    r->status = SW_REMOTE_FAILED;
    r->failed_call = call;
    r->error_number = error_number;
    return r->status;
}

/// Waits until `tid` reports an event, up to `deadline`. Returns 1 with `info` filled, 0 on timeout,
/// -1 on error.
///
/// Polls, because a blocking waitid() cannot time out and a thread in uninterruptible sleep (vfork,
/// disk I/O) stops only when it leaves it. A running target on another CPU stops within ~10 us, so
/// we spin that long first; then we sleep between polls, which also lets a target sharing our CPU
/// run to its stop (sched_yield() did not: a spinning target then waited for the next 4 ms tick).
/// Timer slack is lowered meanwhile so a 10 us sleep is not stretched to the default 50 us.
static int await_event(int tid, uint64_t deadline, siginfo_t *info) {
    uint64_t start = now_ns();
    int old_slack = -1, got;
    for (;;) {
        if ((got = peek_event(tid, info)) != 0) break;
        uint64_t now = now_ns();
        if (now >= deadline) break;
        if (now - start < SPIN_NS) continue;
        if (old_slack < 0) {
            old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
            prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
        }
        // Past a few milliseconds the thread is asleep in the kernel: stop burning wake-ups.
        struct timespec pause = {0, now - start < 5000000 ? POLL_NS : 1000000};
        nanosleep(&pause, NULL);
    }
    if (old_slack > 0) prctl(PR_SET_TIMERSLACK, old_slack, 0, 0, 0);
    return got;
}

static int read_stack_word(void *context, uint64_t address, uint64_t *value) {
    sw_remote_sampler *s = context;
    unw_word_t word;
    if (sw_access_mem(s->space, address, &word, 0, s->upt) < 0) return -1;
    *value = word;
    return 0;
}

/// The frame's registers by DWARF number (libunwind's x86-64 numbering is DWARF's); 0 where unknown.
static void frame_registers(unw_cursor_t *cursor, uint64_t values[17]) {
    for (int reg = 0; reg <= UNW_X86_64_RIP; reg++) {
        unw_word_t value = 0;
        values[reg] = unw_get_reg(cursor, reg, &value) == 0 ? value : 0;
    }
}

/// Makes `values` the registers the next unw_init_remote starts from.
static void restart_from(sw_remote_sampler *s, const uint64_t values[17]) {
    struct user_regs_struct *regs = &s->regs;
    regs->rax = values[0], regs->rdx = values[1], regs->rcx = values[2], regs->rbx = values[3];
    regs->rsi = values[4], regs->rdi = values[5], regs->rbp = values[6], regs->rsp = values[7];
    regs->r8 = values[8], regs->r9 = values[9], regs->r10 = values[10], regs->r11 = values[11];
    regs->r12 = values[12], regs->r13 = values[13], regs->r14 = values[14], regs->r15 = values[15];
    regs->rip = values[16];
    s->regs_valid = 1;
}

/// Where libunwind found no rule to leave a frame: its image's `.debug_frame`, if it has one. On success the
/// sampler's registers are the caller's, for a new walk from there.
static int step_by_debug_frame(sw_remote_sampler *s, uint64_t pc, uint64_t values[17]) {
    sw_image *image = sw_images_find(&s->images, pc);
    if (image == NULL || !sw_debug_frame_step(image, s->pid, pc, values, read_stack_word, s)) return 0;
    restart_from(s, values);
    return 1;
}

/// The largest frame a frame-pointer step believes: a saved frame pointer further above the stack pointer is not one.
#define SW_FRAME_POINTER_REACH (16u << 20)

/// Steps a frame that no table covers by its frame pointer, as eu-stack and gdb do: a function that keeps one saved
/// its caller's at [rbp] and the return address above it. Believed only if rbp points into the stack above rsp,
/// aligned; the other callee-saved registers are not known then and keep their values (as libunwind's guess does).
static int step_by_frame_pointer(sw_remote_sampler *s, uint64_t values[17]) {
    uint64_t fp = values[6], sp = values[7], saved_fp = 0, return_address = 0;
    if (fp < sp || fp - sp > SW_FRAME_POINTER_REACH || (fp & 7) != 0 || fp > UINT64_MAX - 16) return 0;
    if (read_stack_word(s, fp, &saved_fp) != 0 || read_stack_word(s, fp + 8, &return_address) != 0) return 0;
    if (return_address == 0) return 0;
    values[6] = saved_fp;
    values[7] = fp + 16;
    values[16] = return_address;
    restart_from(s, values);
    return 1;
}

/// Where frame `index` of a Swift async function keeps its async context (see `sw_remote_capture`): the slot of its
/// async frame record, read now (the stack changes once the thread runs), and its r14. `values` are the frame's
/// registers and `caller_sp` its canonical frame address (0 if the walk ends here); the record is recognised by its
/// shape (sw_has_async_frame_record).
static void note_context_hints(sw_remote_sampler *s, uint64_t *hints, int index, const uint64_t values[17],
                               uint64_t caller_sp) {
    if (hints == NULL) return;
    uint64_t fp = values[6], sp = values[7], slot = 0;
    int has_record = sw_has_async_frame_record(fp, sp, caller_sp);
    if (has_record && read_stack_word(s, sw_async_context_slot(fp), &slot) != 0) slot = 0;
    hints[2 * index] = slot;
    hints[2 * index + 1] = values[14];
}

static void reverse(uint64_t *values, int count) {
    for (int low = 0, high = count - 1; low < high; low++, high--) {
        uint64_t value = values[low];
        values[low] = values[high];
        values[high] = value;
    }
}

/// Moves `values[by]` to the front, in place.
static void rotate_left(uint64_t *values, int count, int by) {
    reverse(values, by);
    reverse(values + by, count - by);
    reverse(values, count);
}

/// Walks the stopped thread's stack into `addresses`. A stack deeper than `max_frames` keeps its innermost frames
/// (where the thread is) and its outermost quarter (which thread it is, and how it got there): the walk goes on to
/// the end, or to SW_REMOTE_WALK_LIMIT frames, with the outer part in a ring at the end of `addresses`. `hints` (if not
/// NULL) gets the innermost frames' async-context hints; the outermost ones get none.
static void unwind(sw_remote_sampler *s, uint64_t *addresses, uint64_t *hints, int max_frames, sw_remote_result *r) {
    unw_cursor_t cursor;
    s->regs_valid = ptrace(PTRACE_GETREGS, s->upt_tid, 0, &s->regs) == 0;
    for (int i = 0; i < CACHED_PAGES; i++) s->pages[i].address = 0;
    s->file_table_lookups = 0;
    unwinding = s;
    const int outer_capacity = max_frames >= 8 ? max_frames / 4 : 0;
    const int inner_capacity = max_frames - outer_capacity;
    uint64_t *ring = addresses + inner_capacity;
    int rc = unw_init_remote(&cursor, s->space, s->upt), n = 0, walked = 0;
    while (rc >= 0 && walked < SW_REMOTE_WALK_LIMIT && (outer_capacity > 0 || walked < max_frames)) {
        unw_word_t ip;
        if ((rc = unw_get_reg(&cursor, UNW_REG_IP, &ip)) < 0 || ip == 0) break;
        // Only the innermost frames get hints: a task's frame sits below its executor's, near the thread's top.
        uint64_t *frame_hints = walked < inner_capacity ? hints : NULL;
        if (walked < inner_capacity) {
            addresses[n++] = ip;
        } else {
            ring[(walked - inner_capacity) % outer_capacity] = ip;
        }
        walked++;
        if (s->vdso.valid && ip >= s->vdso.start && ip < s->vdso.end) r->reached_vdso = 1;
        uint64_t values[17], own[17];
        frame_registers(&cursor, values);
        memcpy(own, values, sizeof own);
        s->uncovered_ip = 0;
        rc = unw_step(&cursor);
        // A return address is looked up at the call before it.
        const uint64_t lookup = walked == 1 ? ip : ip - 1;
        // No rule in .eh_frame (or a walk that went nowhere): try the image's .debug_frame, then go on from the
        // caller.
        const int uncovered = s->uncovered_ip == ip + 1 || s->uncovered_ip == lookup + 1;
        if ((rc <= 0 || uncovered) && step_by_debug_frame(s, lookup, values)) {
            r->debug_frame_steps++;
            note_context_hints(s, frame_hints, n - 1, own, values[7]);
            rc = unw_init_remote(&cursor, s->space, s->upt);
            continue;
        }
        // No rule anywhere, yet libunwind stepped: its guess for a frame without CFI puts the caller's stack
        // pointer beside the real one (it did for a Swift merged function of libFoundationEssentials, which keeps a
        // frame pointer but has no FDE), and the caller's own rules then read garbage. The frame pointer is right.
        if (uncovered && rc > 0) {
            memcpy(values, own, sizeof values);
            if (step_by_frame_pointer(s, values)) {
                note_context_hints(s, frame_hints, n - 1, own, values[7]);
                rc = unw_init_remote(&cursor, s->space, s->upt);
                continue;
            }
        }
        unw_word_t caller_sp = 0;
        if (rc > 0 && unw_get_reg(&cursor, UNW_REG_SP, &caller_sp) < 0) caller_sp = 0;
        note_context_hints(s, frame_hints, n - 1, own, caller_sp);
        if (rc == 0) break;
    }
    unwinding = NULL;
    s->regs_valid = 0;
    int beyond = walked - inner_capacity;
    if (beyond > 0) {
        // Rotate the ring so the outer part reads innermost first, as the rest does.
        int kept = beyond < outer_capacity ? beyond : outer_capacity;
        if (beyond > outer_capacity) rotate_left(ring, kept, beyond % outer_capacity);
        n += kept;
        r->outer_frames = beyond > outer_capacity ? kept : 0;
        r->omitted_frames = beyond - kept;
    }
    r->walk_limited = walked >= SW_REMOTE_WALK_LIMIT && rc > 0;
    r->frame_count = n;
    r->unwind_error = rc < 0 ? rc : 0;
    r->file_table_lookups = s->file_table_lookups;
}

/// Everything that needs no stopped thread: per-process caches and the per-thread _UPT handle.
static int prepare(sw_remote_sampler *s, int pid, int tid, sw_remote_result *r) {
    if (!settle_pending(s))
        return fail(r, "still waiting for the thread of an earlier, timed-out capture to stop", EBUSY);
    if (pid != s->pid) {
        // Unwind rules are cached by address; another process has other code at those addresses.
        sw_remote_sampler_flush(s);
        sw_vdso_locate(pid, &s->vdso);
        s->pid = pid;
        s->images_stale = 1;
    }
    if (tid != s->upt_tid) {
        if (s->upt != NULL) _UPT_destroy(s->upt);
        s->upt_tid = 0;
        if ((s->upt = _UPT_create(tid)) == NULL) return fail(r, "_UPT_create", ENOMEM);
        s->upt_tid = tid;
    }
    if (s->images_stale) {
        s->images_stale = 0;
        sw_images_load(&s->images, pid);
        unwinding = s;
        if (s->tables_from_memory) {
            sw_images_locate_tables(&s->images, s->space, s->upt);
        } else {
            sw_images_prewarm(&s->images, s->space);
        }
        unwinding = NULL;
    }
    return SW_REMOTE_OK;
}

int sw_remote_capture(sw_remote_sampler *s, int pid, int tid, uint64_t *addresses, uint64_t *context_hints,
                      int max_frames, int timeout_ms, sw_remote_result *r) {
    const uint64_t start = now_ns();
    memset(r, 0, sizeof *r);
    if (timeout_ms <= 0) timeout_ms = 1000;
    if (pid <= 0 || tid <= 0 || max_frames < 0) return fail(r, "arguments", EINVAL);

    // A tid of another process would be unwound with this process's caches.
    char task[64];
    snprintf(task, sizeof task, "/proc/%d/task/%d", pid, tid);
    if (access(task, F_OK) != 0) {
        r->status = SW_REMOTE_NO_SUCH_THREAD;
        r->error_number = errno;
        goto out;
    }
    if (prepare(s, pid, tid, r) != SW_REMOTE_OK) goto out;

    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
        int e = errno;
        char state = thread_state(pid, tid, NULL);
        siginfo_t info;
        if (e == ESRCH || state == 0) {
            r->status = SW_REMOTE_NO_SUCH_THREAD;
            r->error_number = e;
        } else if (state == 'Z' || state == 'X') {
            // A zombie cannot be seized. Its parent may peek at the status (not reap it).
            if (tid == pid && peek_event(pid, &info) == 1 && is_exit(&info)) {
                r->status = SW_REMOTE_EXITED;
                r->wait_status = raw_wait_status(&info);
            } else {
                r->status = SW_REMOTE_NO_SUCH_THREAD;
                r->error_number = e;
            }
        } else if (e == EPERM || e == EACCES) {
            r->status = SW_REMOTE_PERMISSION_DENIED;
            r->error_number = e;
            r->failed_call = "PTRACE_SEIZE";
        } else {
            fail(r, "PTRACE_SEIZE", e);
        }
        goto out;
    }

    const uint64_t stop_start = now_ns();
    // Only a dying thread can refuse (ESRCH), and it reports its exit to the wait below.
    (void)ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    siginfo_t info;
    int got = await_event(tid, stop_start + (uint64_t)timeout_ms * 1000000ull, &info);
    if (got < 0) {
        fail(r, "waitid", errno);
        s->pending_tid = tid;  // still ours: detach it once it is seen stopped
    } else if (got == 0) {
        // Still running (uninterruptible sleep). PTRACE_DETACH needs a stopped tracee: remember it.
        s->pending_tid = tid;
        r->status = SW_REMOTE_TIMED_OUT;
        r->failed_call = "waiting for the thread to stop";
        r->error_number = ETIMEDOUT;
    } else if (is_exit(&info)) {
        settle_exit(pid, tid, &info, r);
    } else {
        const uint64_t stopped_at = now_ns();
        r->stop_wait_ns = stopped_at - stop_start;
        // Consume the stop (WSTOPPED alone: never reap an exit that a SIGKILL may have queued since).
        waitid(P_PID, (id_t)tid, &info, WSTOPPED | __WALL | WNOHANG);
        int event = info.si_status >> 8, sig = info.si_status & 0x7f;
        // event == 0 is a signal-delivery stop: a signal raced our interrupt. The registers are the
        // thread's user state all the same, so unwind here and hand the signal back on detach
        // (which also drops our interrupt, still pending).
        if (event == 0) r->redelivered_signal = sig;
        if (max_frames > 0) unwind(s, addresses, context_hints, max_frames, r);
        r->unwind_ns = now_ns() - stopped_at;
        if (ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)r->redelivered_signal) != 0) {
            // Only a SIGKILL between our stop and our detach makes this fail: collect that exit.
            int e = errno;
            if (await_event(tid, now_ns() + 100000000ull, &info) == 1 && is_exit(&info)) {
                settle_exit(pid, tid, &info, r);
            } else {
                fail(r, "PTRACE_DETACH", e);
            }
        }
    }
    r->stopped_ns = now_ns() - stop_start;

out:
    r->total_ns = now_ns() - start;
    return r->status;
}
