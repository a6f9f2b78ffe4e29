// In-process stack capture: a signal to the thread to capture, whose handler unwinds its own stack with libunwind.
//
// Why C: the capture runs in a signal handler, which may do only async-signal-safe work (no malloc, locks, stdio or
// Swift runtime calls, which may allocate or take locks), and libunwind's API is C macros (unw_init_local ->
// _ULx86_64_init_local). Everything the handler calls is found before the handler is installed.
//
// Why dlopen: linking -lunwind into the workload would interpose libunwind's _Unwind_* over
// libgcc_s's for the whole process and change how its C++/Swift exceptions unwind. dlopen with
// RTLD_LOCAL keeps libunwind's symbols out of global lookup; we call only the four we dlsym.
//
// How a capture works: the caller thread sends SIGRTMIN+5 to the target thread with tgkill; the
// target's handler unwinds its own stack (from the signal's ucontext, so the first frame is the
// interrupted PC) into a static buffer and sem_posts; the caller waits with a timeout and copies
// the frames out. A generation counter makes a late handler (after a timeout) harmless.
//
// Measured on this machine kind (2 vCPU VM, glibc 2.36, libunwind 1.6.2), the target thread spends
// in the handler: ~5 us for a 5-frame stack, ~35 us for 37 frames, ~65 us for 107 frames once
// libunwind's cache knows the frames; 30-150 us the first time (prepare's warm-up already paid for
// libunwind's own initialization). The caller has the frames 50-130 us after sending the signal.
// The price: the signal cuts a blocking sleep in the target short with EINTR, SA_RESTART or not
// (a usleep(300 ms) captured after 50 ms returned after 51 ms); ptrace from outside does not.
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "CStallwatchAgentSupport.h"
#include "CStallwatchLoopModel.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

// MARK: - libunwind, loaded at run time

typedef int (*init_local2_fn)(unw_cursor_t *, unw_context_t *, int);
typedef int (*init_local_fn)(unw_cursor_t *, unw_context_t *);
typedef int (*step_fn)(unw_cursor_t *);
typedef int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

/// Written once under `prepare_lock` before the handler is installed, read-only afterwards.
static struct {
    init_local2_fn init_local2;  // libunwind >= 1.3; NULL before
    init_local_fn init_local;
    step_fn step;
    get_reg_fn get_reg;
    int signal_number;  // 0 until prepared
} unwinder;

static pthread_mutex_t prepare_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread char last_error[256];  // per thread: never touched by the signal handler

const char *sw_agent_capture_error(void) { return last_error; }

/// Records why the calling thread's last call failed and returns `code`.
static int failure(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int failure(int code, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(last_error, sizeof last_error, format, arguments);
    va_end(arguments);
    return code;
}

int sw_agent_default_capture_signal(void) { return SIGRTMIN + 5; }

/// Walks the stack described by `context` into `out`. Async-signal-safe as libunwind's local
/// unwinder is: its cache lock is held only with all signals blocked, and memory it is unsure of
/// is validated (with write() to a pipe) before it is read.
///
/// `hints`, if not NULL, receives two words per frame for the async callers of a Swift task running on the thread
/// (see `sw_agent_capture_thread`): the slot of the frame's async frame record, read here because the stack changes
/// once the thread runs on, and its r14. The slot lies between the frame's stack pointer and its CFA, on the stack
/// libunwind has just walked, so reading it cannot fault.
static int unwind_context(ucontext_t *context, int signal_frame, uint64_t *out, uint64_t *hints, int max) {
    unw_cursor_t cursor;
    int rc;
    // UNW_INIT_SIGNAL_FRAME: the first IP is where the thread was interrupted, not a return address,
    // so it must not be backed up by one byte to find its unwind rule.
    if (signal_frame && unwinder.init_local2 != NULL)
        rc = unwinder.init_local2(&cursor, context, UNW_INIT_SIGNAL_FRAME);
    else
        rc = unwinder.init_local(&cursor, context);
    if (rc < 0) return 0;
    int n = 0;
    while (n < max) {
        unw_word_t ip;
        if (unwinder.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        out[n++] = ip;
        unw_word_t fp = 0, sp = 0, r14 = 0, caller_sp = 0;
        if (hints != NULL) {
            (void)unwinder.get_reg(&cursor, UNW_X86_64_RBP, &fp);
            (void)unwinder.get_reg(&cursor, UNW_X86_64_RSP, &sp);
            (void)unwinder.get_reg(&cursor, UNW_X86_64_R14, &r14);
        }
        int stepped = unwinder.step(&cursor);
        if (hints != NULL) {
            if (stepped <= 0 || unwinder.get_reg(&cursor, UNW_X86_64_RSP, &caller_sp) < 0) caller_sp = 0;
            int has_record = sw_has_async_frame_record(fp, sp, caller_sp);
            hints[2 * (n - 1)] = has_record ? *(const uint64_t *)(uintptr_t)sw_async_context_slot(fp) : 0;
            hints[2 * (n - 1) + 1] = r14;
        }
        if (stepped <= 0) break;
    }
    return n;
}

// MARK: - The capture exchange

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;  // one requester at a time
static sem_t answered;
static _Atomic pid_t requested_tid;
static _Atomic int requested_max;
static _Atomic unsigned requested_generation;  // bumped per request; 0 is never used
static _Atomic unsigned answered_generation;
static _Atomic unsigned buffer_writer;  // generation writing `frames`, 0 = none
static uint64_t frames[SW_IN_PROCESS_MAX_FRAMES];
static uint64_t frame_hints[2 * SW_IN_PROCESS_MAX_FRAMES];
static int frame_count;
static uint64_t handler_ns;

static void capture_handler(int sig, siginfo_t *info, void *context) {
    (void)sig;
    // Only our own tgkill; a stray kill(SIGRTMIN+5) from outside is dropped.
    if (info->si_code != SI_TKILL || info->si_pid != getpid()) return;
    int saved_errno = errno;  // libunwind's memory validation may leave EFAULT behind
    uint64_t start = sw_agent_now_ns();
    unsigned generation = atomic_load(&requested_generation);
    // A late signal from a timed-out request: serve the current request only if it is for us and
    // still unanswered (then this stack is as good as the one the pending signal would take).
    if ((pid_t)syscall(SYS_gettid) != atomic_load(&requested_tid) || atomic_load(&answered_generation) == generation)
        goto done;
    // Another thread's late handler may still be writing the buffer: wait for it, briefly.
    for (unsigned expected = 0; !atomic_compare_exchange_weak(&buffer_writer, &expected, generation); expected = 0) {
        if (sw_agent_now_ns() - start > 100000000ull) goto done;
        sched_yield();
    }
    if (atomic_load(&requested_generation) == generation) {
        frame_count = unwind_context(context, 1, frames, frame_hints, atomic_load(&requested_max));
        handler_ns = sw_agent_now_ns() - start;
        atomic_store(&answered_generation, generation);
        atomic_store(&buffer_writer, 0);
        sem_post(&answered);
    } else {
        atomic_store(&buffer_writer, 0);  // superseded while we waited
    }
done:
    errno = saved_errno;
}

int sw_agent_capture_prepare(int signal_number) {
    pthread_mutex_lock(&prepare_lock);
    int result = 0;
    last_error[0] = 0;
    if (unwinder.signal_number != 0) {
        if (signal_number != unwinder.signal_number)
            result = failure(-EBUSY, "in-process capture is already set up with signal %d", unwinder.signal_number);
        goto out;
    }
    if (signal_number < SIGRTMIN || signal_number > SIGRTMAX) {
        result = failure(-EINVAL, "capture signal %d is not a real-time signal (%d...%d)", signal_number, SIGRTMIN,
                         SIGRTMAX);
        goto out;
    }
    void *library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        result = failure(-ENOENT, "cannot load libunwind.so.8 (apt install libunwind8): %s", dlerror());
        goto out;
    }
    unwinder.init_local2 = (init_local2_fn)dlsym(library, "_ULx86_64_init_local2");
    unwinder.init_local = (init_local_fn)dlsym(library, "_ULx86_64_init_local");
    unwinder.step = (step_fn)dlsym(library, "_ULx86_64_step");
    unwinder.get_reg = (get_reg_fn)dlsym(library, "_ULx86_64_get_reg");
    if (unwinder.init_local == NULL || unwinder.step == NULL || unwinder.get_reg == NULL) {
        result = failure(-ENOENT, "libunwind.so.8 lacks the x86_64 local unwinder");
        goto out;
    }
    if (sem_init(&answered, 0, 0) != 0) {
        result = failure(-errno, "sem_init: %s", strerror(errno));
        goto out;
    }

    // Warm up before any handler needs it: libunwind's first unwind initializes itself, opens its
    // validation pipe and walks the loaded objects, none of which should happen in a handler first.
    ucontext_t here;
    uint64_t scratch[64];
    if (getcontext(&here) == 0) (void)unwind_context(&here, 0, scratch, NULL, 64);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = capture_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(signal_number, &action, NULL) != 0) {
        result = failure(-errno, "sigaction(%d): %s", signal_number, strerror(errno));
        goto out;
    }
    unwinder.signal_number = signal_number;
out:
    pthread_mutex_unlock(&prepare_lock);
    return result;
}

int sw_agent_capture_thread(pid_t tid, uint64_t *addresses, uint64_t *context_hints, int max_frames, int timeout_ms,
                            uint64_t *stopped_ns) {
    int signal_number;
    pthread_mutex_lock(&prepare_lock);
    signal_number = unwinder.signal_number;
    pthread_mutex_unlock(&prepare_lock);
    last_error[0] = 0;
    if (signal_number == 0) return failure(-EINVAL, "in-process capture is not prepared");
    if (addresses == NULL || max_frames <= 0 || tid <= 0) return failure(-EINVAL, "invalid argument");
    if (tid == sw_agent_gettid()) return failure(-EDEADLK, "a thread cannot capture itself this way");
    if (max_frames > SW_IN_PROCESS_MAX_FRAMES) max_frames = SW_IN_PROCESS_MAX_FRAMES;
    if (timeout_ms <= 0) timeout_ms = 1000;

    pthread_mutex_lock(&capture_lock);
    while (sem_trywait(&answered) == 0) {}  // posts of late handlers
    atomic_store(&requested_max, max_frames);
    atomic_store(&requested_tid, tid);
    unsigned generation = atomic_fetch_add(&requested_generation, 1) + 1;
    if (generation == 0) generation = atomic_fetch_add(&requested_generation, 1) + 1;

    int result;
    if (syscall(SYS_tgkill, getpid(), tid, signal_number) != 0) {
        result = failure(-errno, "tgkill(%d): %s", (int)tid, strerror(errno));
    } else {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) deadline.tv_sec++, deadline.tv_nsec -= 1000000000L;
        for (;;) {
            if (sem_clockwait(&answered, CLOCK_MONOTONIC, &deadline) != 0) {
                if (errno == EINTR) continue;
                result = errno == ETIMEDOUT
                             ? failure(-ETIMEDOUT, "thread %d did not answer signal %d within %d ms (blocked?)",
                                       (int)tid, signal_number, timeout_ms)
                             : failure(-errno, "sem_clockwait: %s", strerror(errno));
                break;
            }
            if (atomic_load(&answered_generation) == generation) {
                memcpy(addresses, frames, (size_t)frame_count * sizeof frames[0]);
                if (context_hints != NULL)
                    memcpy(context_hints, frame_hints, 2 * (size_t)frame_count * sizeof frame_hints[0]);
                if (stopped_ns != NULL) *stopped_ns = handler_ns;
                result = frame_count > 0 ? frame_count : failure(-EIO, "libunwind could not start the unwind");
                break;
            }
        }
    }
    pthread_mutex_unlock(&capture_lock);
    return result;
}

int sw_agent_describe_address(uint64_t address, uint64_t *image_base, const char **symbol) {
    Dl_info info;
    if (dladdr((const void *)(uintptr_t)address, &info) == 0 || info.dli_fbase == NULL) return 0;
    if (image_base != NULL) *image_base = (uint64_t)(uintptr_t)info.dli_fbase;
    if (symbol != NULL) *symbol = info.dli_sname;
    return 1;
}
