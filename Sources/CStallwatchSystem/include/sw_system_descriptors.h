// Descriptors made the way every child process and event loop needs: close-on-exec from the start, in-memory
// files, sockets that tell who sent a datagram, an epoll instance with its wake-up eventfd.
#ifndef SW_SYSTEM_DESCRIPTORS_H
#define SW_SYSTEM_DESCRIPTORS_H

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

/// An epoll instance watching a new eventfd (both close-on-exec): an event loop's wait, as SwiftNIO's is made
/// (Swift's Glibc module has neither epoll nor eventfd). Returns the epoll descriptor and sets `*wakeup` to the
/// eventfd, or -1 (errno set).
int sw_epoll_with_eventfd(int *wakeup);

/// Waits in epoll_wait for one event, `timeout_ms` at most (-1: for ever). Returns the number ready, 0 or -1.
int sw_epoll_wait_one(int epoll, int timeout_ms);

#endif
