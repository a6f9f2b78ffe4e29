// Linux calls that Swift cannot make through its Glibc module (GNU extensions, variadic functions,
// dladdr). Only plain C types and sw_-prefixed names cross this header.
#ifndef C_STALLWATCH_SYSTEM_H
#define C_STALLWATCH_SYSTEM_H

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

/// The name of the vDSO function containing `offset` (bytes from the vDSO's start), or NULL.
///
/// Every process on one kernel maps the same vDSO image, so another process's vDSO addresses are named by
/// looking up the same offset in ours (dladdr knows the vDSO's dynamic symbols; Swift cannot call dladdr).
const char *sw_vdso_symbol(unsigned long offset);

/// The size of this process's vDSO image in bytes (0 if there is none), to check it matches another's.
unsigned long sw_vdso_size(void);

/// The path of the shared object that defines `symbol` in this process (dlsym + dladdr), or NULL: e.g. which
/// libswiftCore.so this process runs on. NULL too when the symbol is linked into the executable itself.
const char *sw_library_defining(const char *symbol);

/// pipe2(descriptors, O_CLOEXEC): both ends close-on-exec from the start, so no child spawned meanwhile by another
/// thread inherits them. Returns 0 or -1 (errno set).
int sw_pipe_cloexec(int descriptors[2]);

/// An anonymous in-memory file (memfd_create, close-on-exec) holding `length` bytes of `data`, its offset back at
/// the start: a helper process's whole standard input, with no pipe to fill up. Returns the descriptor or -1.
int sw_memory_file(const void *data, unsigned long length);

/// Turns on SO_PASSCRED: each datagram then arrives with its sender's pid, filled in and checked by the kernel
/// (a process cannot claim another's pid). Returns 0 or -1 (errno set).
int sw_socket_pass_credentials(int descriptor);

/// recv(2) that also gives the sending process's pid as the kernel recorded it, in this process's pid namespace;
/// 0 when the datagram carried none. Returns the bytes received, or -1 (errno set).
long sw_recv_from_process(int descriptor, void *buffer, unsigned long length, int flags, int *sender_pid);

/// The pid of the process that made a connected Unix socket's other end (`SO_PEERCRED`: for a listening socket,
/// whoever called listen), in this process's pid namespace; 0 if it is not visible there. Returns -1 (errno set).
int sw_socket_peer_pid(int descriptor);

/// accept4(2) with SOCK_NONBLOCK and SOCK_CLOEXEC, in one call (no window where a fork could inherit it): the metrics
/// endpoint's connections. Returns the connection, or -1 (errno set). Swift's Glibc module does not import accept4.
int sw_accept_nonblocking(int descriptor);

/// process_vm_readv(2) of one range of process `pid` (this process's own pid works without ptrace permission):
/// reads without stopping the process and fails with EFAULT instead of faulting on a bad address. Returns the bytes
/// read, or -1 (errno set). Swift's Glibc module does not import it (it needs _GNU_SOURCE).
long sw_read_process_memory(int pid, unsigned long address, void *buffer, unsigned long length);

/// An epoll instance watching a new eventfd (both close-on-exec): an event loop's wait, as SwiftNIO's is made
/// (Swift's Glibc module has neither epoll nor eventfd). Returns the epoll descriptor and sets `*wakeup` to the
/// eventfd, or -1 (errno set).
int sw_epoll_with_eventfd(int *wakeup);

/// Waits in epoll_wait for one event, `timeout_ms` at most (-1: for ever). Returns the number ready, 0 or -1.
int sw_epoll_wait_one(int epoll, int timeout_ms);

/// Names the calling thread (pthread_setname_np; at most 15 bytes are kept). Returns 0 or an error number.
int sw_set_thread_name(const char *name);

/// The calling thread's id (gettid).
int sw_thread_id(void);

/// Until `sw_temporary_file_forget`, SIGINT, SIGTERM, SIGHUP or SIGQUIT first removes the file at `path`, then ends
/// the process as it would have (default action, re-raised). Signals not at their default action are left alone.
/// One file at a time, not thread-safe against itself. Returns 0, or -1 if `path` is longer than PATH_MAX.
int sw_temporary_file_remember(const char *path);

/// Stops removing the remembered file; the signals are back at their default action.
void sw_temporary_file_forget(void);

#endif
