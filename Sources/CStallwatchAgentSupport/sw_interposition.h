// What the agent's stand-ins for other libraries' functions share (loop_threads.c, executor_jobs.c): the next
// definition of the function they stand in front of, and thread-locals they reach on every call.
#ifndef SW_INTERPOSITION_H
#define SW_INTERPOSITION_H

#include <dlfcn.h>
#include <stdatomic.h>

// Initial-exec: one load from the thread pointer, where the default model for a shared library calls __tls_get_addr;
// these are read on every call the agent stands in for. (A library loaded with dlopen takes these few bytes from
// glibc's static TLS surplus.)
#define SW_FAST_TLS __thread __attribute__((tls_model("initial-exec")))

/// Declares `real`, the next definition of `name` after the agent's (the library it stands in front of), looked up
/// once and kept in `slot` (an `_Atomic(type)`).
#define SW_NEXT(type, slot, name)                                                                                  \
    type real = atomic_load_explicit(&slot, memory_order_acquire);                                                 \
    if (real == NULL) {                                                                                            \
        real = (type)dlsym(RTLD_NEXT, name);                                                                       \
        atomic_store_explicit(&slot, real, memory_order_release);                                                  \
    }

#endif
