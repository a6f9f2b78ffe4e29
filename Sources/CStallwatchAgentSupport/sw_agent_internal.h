// What the agent's C files share among themselves and never show Swift: how their hot paths are compiled.
#ifndef SW_AGENT_INTERNAL_H
#define SW_AGENT_INTERNAL_H

// Always inlined, in debug builds too: publishing must stay one function whose only calls are its rare paths.
#define SW_INLINE static inline __attribute__((always_inline))

// Private to the agent's library: reached from its own code at a fixed offset, with no lookup.
#define SW_HIDDEN __attribute__((visibility("hidden")))

// A rare path the hot paths call: out of line and, where the compiler can, saving every register it uses, so that a
// caller keeps its own values in registers across the call instead of saving them on every pass.
#if defined(__has_attribute) && __has_attribute(preserve_most)
#define SW_RARE __attribute__((noinline, preserve_most, visibility("hidden")))
#else
#define SW_RARE __attribute__((noinline, visibility("hidden")))
#endif

// Initial-exec: one load from the thread pointer, where the default model for a shared library calls __tls_get_addr;
// the stand-ins read these on every call. (A library loaded with dlopen takes these few bytes from glibc's static TLS
// surplus.)
#define SW_FAST_TLS __thread __attribute__((tls_model("initial-exec")))

#endif
