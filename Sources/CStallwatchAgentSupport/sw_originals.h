// The functions the agent stands in front of, and the one way each stand-in finds the definition it hands on to.
//
// Every stand-in is a function of the same name as another library's (CoreFoundation's run loop, libdispatch's), which
// the preloaded agent defines first, so that the library's callers reach it through their PLT. A stand-in is thin:
// it hands on to a named hook of the agent (cf_run_loop.c, dispatch.c) and then to the original, the next definition
// in the loader's search order, through its slot here (`SW_ORIGINAL`): one load and an indirect call, no test.
//
// All originals are found at once, by sw_originals_resolve, as the agent's load hook runs (before main, and before any
// thread of the agent's): from then on a stand-in never calls into the loader, so calling one is as async-signal-safe
// as its original is. A stand-in called earlier than that (from a library's constructor that runs before the agent's)
// finds its slot holding a resolver of the same type, which resolves them all and hands on. A library the program does
// not load (no CoreFoundation, no libdispatch) leaves its slots to stubs that do nothing and return the neutral result.
#ifndef SW_ORIGINALS_H
#define SW_ORIGINALS_H

#include "sw_agent_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef void (*sw_work_fn)(void *);

typedef int32_t (*sw_run_specific_fn)(void *loop, void *mode, double seconds, unsigned char return_after_handled);
typedef void *(*sw_get_loop_fn)(pthread_t thread);
typedef void (*sw_async_f_fn)(void *queue, void *context, sw_work_fn work);
typedef void (*sw_after_f_fn)(uint64_t when, void *queue, void *context, sw_work_fn work);
typedef void (*sw_handler_f_fn)(void *source, sw_work_fn handler);

/// The originals, one slot per stand-in, named as the function.
struct sw_originals {
    _Atomic(sw_run_specific_fn) CFRunLoopRunSpecific;
    _Atomic(sw_get_loop_fn) _CFRunLoopGet0;
    _Atomic(sw_async_f_fn) dispatch_async_f;
    _Atomic(sw_after_f_fn) dispatch_after_f;
    _Atomic(sw_handler_f_fn) dispatch_source_set_event_handler_f;
};

extern struct sw_originals sw_originals SW_HIDDEN;

/// CoreFoundation's internals the agent reads without standing in front of them, found in the same pass, the same
/// way (NULL where absent): the lookup of a thread's loop that never makes one, and the main thread's pthread_t.
struct sw_library_internals {
    sw_get_loop_fn _CFRunLoopGet0b;
    pthread_t *_CFMainPThread;
};

extern struct sw_library_internals sw_library_internals SW_HIDDEN;

/// The original of the function `name` stands in for.
#define SW_ORIGINAL(name) atomic_load_explicit(&sw_originals.name, memory_order_acquire)

/// Finds every original and internal, once (later calls return at once).
SW_HIDDEN void sw_originals_resolve(void);

#endif
