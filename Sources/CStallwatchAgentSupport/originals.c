// The one way the agent's stand-ins find their originals (see sw_originals.h): each by name, the next definition after
// the agent's in the loader's search order (RTLD_NEXT, the library it stands in front of when preloaded), or where the
// agent comes after that library (linked into an app after libFoundation), the first one, never the agent's own.
#define _GNU_SOURCE
#include "sw_originals.h"

#include <dlfcn.h>

// The stubs a slot keeps where its library is not loaded: what the original would do with nothing to work on.
static int32_t missing_CFRunLoopRunSpecific(void *loop, void *mode, double seconds, unsigned char once) {
    (void)loop, (void)mode, (void)seconds, (void)once;
    return 1;  // kCFRunLoopRunFinished: the mode has nothing in it
}
static void *missing__CFRunLoopGet0(pthread_t thread) {
    (void)thread;
    return NULL;
}
static void missing_dispatch_async_f(void *queue, void *context, sw_work_fn work) {
    (void)queue, (void)context, (void)work;
}
static void missing_dispatch_after_f(uint64_t when, void *queue, void *context, sw_work_fn work) {
    (void)when, (void)queue, (void)context, (void)work;
}
static void missing_dispatch_source_set_event_handler_f(void *source, sw_work_fn handler) {
    (void)source, (void)handler;
}

// The slots' first values: a stand-in called before the load hook resolves everything, then hands on.
static int32_t resolve_CFRunLoopRunSpecific(void *loop, void *mode, double seconds, unsigned char once) {
    sw_originals_resolve();
    return SW_ORIGINAL(CFRunLoopRunSpecific)(loop, mode, seconds, once);
}
static void *resolve__CFRunLoopGet0(pthread_t thread) {
    sw_originals_resolve();
    return SW_ORIGINAL(_CFRunLoopGet0)(thread);
}
static void resolve_dispatch_async_f(void *queue, void *context, sw_work_fn work) {
    sw_originals_resolve();
    SW_ORIGINAL(dispatch_async_f)(queue, context, work);
}
static void resolve_dispatch_after_f(uint64_t when, void *queue, void *context, sw_work_fn work) {
    sw_originals_resolve();
    SW_ORIGINAL(dispatch_after_f)(when, queue, context, work);
}
static void resolve_dispatch_source_set_event_handler_f(void *source, sw_work_fn handler) {
    sw_originals_resolve();
    SW_ORIGINAL(dispatch_source_set_event_handler_f)(source, handler);
}

struct sw_originals sw_originals = {
    .CFRunLoopRunSpecific = resolve_CFRunLoopRunSpecific,
    ._CFRunLoopGet0 = resolve__CFRunLoopGet0,
    .dispatch_async_f = resolve_dispatch_async_f,
    .dispatch_after_f = resolve_dispatch_after_f,
    .dispatch_source_set_event_handler_f = resolve_dispatch_source_set_event_handler_f,
};

/// Whether `address` lies in the agent's own library.
static int is_own(void *address) {
    Dl_info found, own;
    if (dladdr(address, &found) == 0 || dladdr((void *)is_own, &own) == 0) return 0;
    return found.dli_fbase == own.dli_fbase;
}

/// The original of `name`, or NULL where no library but the agent defines it.
static void *find(const char *name) {
    void *next = dlsym(RTLD_NEXT, name);
    if (next != NULL && !is_own(next)) return next;
    void *first = dlsym(RTLD_DEFAULT, name);
    return first != NULL && !is_own(first) ? first : NULL;
}

#define RESOLVE(name)                                                                                                  \
    do {                                                                                                               \
        void *found = find(#name);                                                                                     \
        atomic_store_explicit(&sw_originals.name, found != NULL ? (__typeof__(&missing_##name))found : missing_##name, \
                              memory_order_release);                                                                   \
    } while (0)

struct sw_library_internals sw_library_internals;

static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void resolve_all(void) {
    RESOLVE(CFRunLoopRunSpecific);
    RESOLVE(_CFRunLoopGet0);
    RESOLVE(dispatch_async_f);
    RESOLVE(dispatch_after_f);
    RESOLVE(dispatch_source_set_event_handler_f);
    sw_library_internals._CFRunLoopGet0b = (sw_get_loop_fn)find("_CFRunLoopGet0b");
    sw_library_internals._CFMainPThread = (pthread_t *)find("_CFMainPThread");
}

void sw_originals_resolve(void) { pthread_once(&resolved, resolve_all); }
