// Thin wrappers over signalfd(2): Swift's Glibc module does not import <sys/signalfd.h>.
#define _GNU_SOURCE
#include "CStallwatchSystem.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

int sw_signalfd_create(const sigset_t *mask) { return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC); }

int sw_signalfd_read(int descriptor, int *sent_by_process) {
    struct signalfd_siginfo info;
    if (read(descriptor, &info, sizeof info) != (ssize_t)sizeof info) {
        return 0;
    }
    // SI_USER (kill) and SI_QUEUE (sigqueue) are <= 0; the kernel and tty use positive codes.
    *sent_by_process = info.ssi_code <= 0;
    return (int)info.ssi_signo;
}

const char *sw_vdso_symbol(unsigned long offset) {
    uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (base == 0 || offset >= sw_vdso_size()) {
        return NULL;
    }
    Dl_info info;
    if (dladdr((void *)(base + offset), &info) == 0 || info.dli_sname == NULL) {
        return NULL;
    }
    return info.dli_sname;
}

unsigned long sw_vdso_size(void) {
    // The vDSO's extent is the end of its last loadable segment, from its own program headers.
    const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
    if (header == NULL) {
        return 0;
    }
    const ElfW(Phdr) *segments = (const ElfW(Phdr) *)((const char *)header + header->e_phoff);
    unsigned long end = 0;
    for (int index = 0; index < header->e_phnum; index++) {
        if (segments[index].p_type == PT_LOAD && segments[index].p_vaddr + segments[index].p_memsz > end) {
            end = segments[index].p_vaddr + segments[index].p_memsz;
        }
    }
    return end;
}

int sw_set_dumpable(int value) { return prctl(PR_SET_DUMPABLE, value, 0, 0, 0); }

int sw_set_parent_death_signal(int signal) { return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0); }

int sw_memory_file(const void *data, unsigned long length) {
    int descriptor = memfd_create("stallwatch-input", MFD_CLOEXEC);
    if (descriptor < 0) return -1;
    const char *bytes = data;
    for (unsigned long written = 0; written < length;) {
        ssize_t result = write(descriptor, bytes + written, length - written);
        if (result < 0 && errno == EINTR) continue;
        if (result < 0) {
            close(descriptor);
            return -1;
        }
        written += (unsigned long)result;
    }
    if (lseek(descriptor, 0, SEEK_SET) != 0) {
        close(descriptor);
        return -1;
    }
    return descriptor;
}

const char *sw_library_defining(const char *symbol) {
    void *address = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL) return NULL;
    void *executable = dlopen(NULL, RTLD_NOW | RTLD_NOLOAD);
    void *owner = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    int inExecutable = owner != NULL && owner == executable;
    if (owner) dlclose(owner);
    if (executable) dlclose(executable);
    return inExecutable ? NULL : info.dli_fname;
}

int sw_pipe_cloexec(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }

// Sender credentials on a Unix socket: CMSG_* are macros and struct ucred needs _GNU_SOURCE, so both live here.
#include <sys/socket.h>

int sw_socket_pass_credentials(int descriptor) {
    int on = 1;
    return setsockopt(descriptor, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

long sw_recv_from_process(int descriptor, void *buffer, unsigned long length, int flags, int *sender_pid) {
    union {
        struct cmsghdr header;
        char bytes[CMSG_SPACE(sizeof(struct ucred))];
    } control;
    struct iovec data = {buffer, length};
    struct msghdr message = {0};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    *sender_pid = 0;
    ssize_t received = recvmsg(descriptor, &message, flags | MSG_CMSG_CLOEXEC);
    if (received < 0) return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
            *sender_pid = credentials.pid;
        }
    }
    return received;
}

long sw_read_process_memory(int pid, unsigned long address, void *buffer, unsigned long length) {
    struct iovec local = {buffer, length}, remote = {(void *)address, length};
    return (long)process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}

int sw_epoll_with_eventfd(int *wakeup) {
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) return -1;
    int event_descriptor = eventfd(0, EFD_CLOEXEC);
    if (event_descriptor < 0) {
        close(epoll);
        return -1;
    }
    struct epoll_event event = {.events = EPOLLIN, .data = {.fd = event_descriptor}};
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, event_descriptor, &event) != 0) {
        close(event_descriptor);
        close(epoll);
        return -1;
    }
    *wakeup = event_descriptor;
    return epoll;
}

int sw_epoll_wait_one(int epoll, int timeout_ms) {
    struct epoll_event event;
    return epoll_wait(epoll, &event, 1, timeout_ms);
}

int sw_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = 0;
    return pthread_setname_np(pthread_self(), truncated);
}

int sw_thread_id(void) { return (int)gettid(); }

int sw_socket_peer_pid(int descriptor) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    return credentials.pid;
}

int sw_accept_nonblocking(int descriptor) { return accept4(descriptor, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }
