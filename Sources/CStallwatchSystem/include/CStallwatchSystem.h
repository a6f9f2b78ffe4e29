// Linux calls the collector needs that Swift's Glibc module does not import (signalfd is a GNU
// extension). Only plain C types and sw_-prefixed names cross this header.
#ifndef C_STALLWATCH_SYSTEM_H
#define C_STALLWATCH_SYSTEM_H

#include <signal.h>

/// Creates a non-blocking, close-on-exec signalfd for `mask`. Returns the descriptor or -1 (errno set).
int sw_signalfd_create(const sigset_t *mask);

/// Reads one pending signal. Returns its number, or 0 when none is pending (or on error).
/// `*sent_by_process` is 1 when another process sent it with kill(2)/sigqueue(2), 0 when the kernel or
/// the terminal generated it (e.g. Ctrl-C, SIGCHLD).
int sw_signalfd_read(int descriptor, int *sent_by_process);

#endif
