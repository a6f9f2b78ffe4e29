// Signals a command-line tool handles itself: read from a signalfd, sent at its parent's death, and the cleanup of a
// half-written output file on a fatal one. Also who may ptrace it.
#ifndef SW_SYSTEM_SIGNALS_H
#define SW_SYSTEM_SIGNALS_H

#include <signal.h>

/// Creates a non-blocking, close-on-exec signalfd for `mask`. Returns the descriptor or -1 (errno set).
int sw_signalfd_create(const sigset_t *mask);

/// Reads one pending signal. Returns its number, or 0 when none is pending (or on error).
/// `*sent_by_process` is 1 when another process sent it with kill(2)/sigqueue(2), 0 when the kernel or
/// the terminal generated it (e.g. Ctrl-C, SIGCHLD).
int sw_signalfd_read(int descriptor, int *sent_by_process);

/// prctl(PR_SET_DUMPABLE, value): 0 makes the process refuse ptrace from anyone without CAP_SYS_PTRACE.
/// Returns 0 or -1 (errno set). (prctl is variadic, which Swift cannot call.)
int sw_set_dumpable(int value);

/// prctl(PR_SET_PDEATHSIG, signal): the kernel sends `signal` to this process when the thread that started it exits
/// (library mode's capture helper dies with its app). Returns 0 or -1 (errno set).
int sw_set_parent_death_signal(int signal);

/// Until `sw_temporary_file_forget`, SIGINT, SIGTERM, SIGHUP or SIGQUIT first removes the file at `path`, then ends
/// the process as it would have (default action, re-raised). Signals not at their default action are left alone.
/// One file at a time, not thread-safe against itself. Returns 0, or -1 if `path` is longer than PATH_MAX.
int sw_temporary_file_remember(const char *path);

/// Stops removing the remembered file; the signals are back at their default action.
void sw_temporary_file_forget(void);

#endif
