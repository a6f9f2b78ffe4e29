// Small facts about the process and its threads that Swift's Glibc module cannot ask for, or not cheaply: clocks,
// thread ids, secure execution, the ptrace permission, close-on-exec, where the agent was loaded from.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

const char *sw_agent_library_path(void) {
    Dl_info info;
    if (dladdr((const void *)&sw_agent_library_path, &info) == 0 || info.dli_fname == NULL) return NULL;
    return info.dli_fname;
}

uint64_t sw_agent_coarse_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sw_agent_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

pid_t sw_agent_gettid(void) { return (pid_t)syscall(SYS_gettid); }

int sw_agent_secure_execution(void) { return getauxval(AT_SECURE) != 0; }

int sw_agent_set_ptracer(pid_t pid) { return prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0) == 0 ? 0 : -errno; }

int sw_agent_set_cloexec(int fd, int on) {
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0) return -errno;
    flags = on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
    return fcntl(fd, F_SETFD, flags) == 0 ? 0 : -errno;
}
