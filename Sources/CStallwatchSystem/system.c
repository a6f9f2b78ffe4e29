// Thin wrappers over signalfd(2): Swift's Glibc module does not import <sys/signalfd.h>.
#define _GNU_SOURCE
#include "CStallwatchSystem.h"

#include <sys/signalfd.h>
#include <unistd.h>

int sw_signalfd_create(const sigset_t *mask) {
    return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

int sw_signalfd_read(int descriptor, int *sent_by_process) {
    struct signalfd_siginfo info;
    if (read(descriptor, &info, sizeof info) != (ssize_t)sizeof info) {
        return 0;
    }
    // SI_USER (kill) and SI_QUEUE (sigqueue) are <= 0; the kernel and tty use positive codes.
    *sent_by_process = info.ssi_code <= 0;
    return (int)info.ssi_signo;
}
