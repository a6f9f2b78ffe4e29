// A temporary file that a signal must not leave behind: Swift code cannot run in a signal handler, so the path is
// kept in a preallocated buffer and removed by a handler written in C with async-signal-safe calls only.
#include "CStallwatchSystem.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static const int sw_ending_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define SW_ENDING_SIGNAL_COUNT (sizeof sw_ending_signals / sizeof sw_ending_signals[0])

static char sw_temporary_path[PATH_MAX];
// Set once the path is whole: a handler that sees 1 reads a complete path, and the exchange removes it only once.
static atomic_int sw_temporary_armed;
static int sw_handler_installed[SW_ENDING_SIGNAL_COUNT];

static void sw_remove_temporary_and_end(int signal_number) {
    int saved = errno;
    if (atomic_exchange(&sw_temporary_armed, 0)) unlink(sw_temporary_path);
    // The default action, re-raised: pending while this handler runs (the signal is blocked in it), it ends the
    // process as the signal would have, with the signal as its exit status.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal_number, &fallback, NULL);
    raise(signal_number);
    errno = saved;
}

int sw_temporary_file_remember(const char *path) {
    size_t length = strlen(path);
    if (length >= sizeof sw_temporary_path) return -1;
    atomic_store(&sw_temporary_armed, 0);
    memcpy(sw_temporary_path, path, length + 1);
    atomic_store(&sw_temporary_armed, 1);
    for (size_t index = 0; index < SW_ENDING_SIGNAL_COUNT; index++) {
        struct sigaction current;
        // Only signals at their default action: an ignored SIGINT (`nohup`, a background job) stays ignored.
        if (sigaction(sw_ending_signals[index], NULL, &current) != 0 || current.sa_handler != SIG_DFL) continue;
        struct sigaction handler;
        memset(&handler, 0, sizeof handler);
        handler.sa_handler = sw_remove_temporary_and_end;
        sigemptyset(&handler.sa_mask);
        for (size_t other = 0; other < SW_ENDING_SIGNAL_COUNT; other++) {
            sigaddset(&handler.sa_mask, sw_ending_signals[other]);
        }
        if (sigaction(sw_ending_signals[index], &handler, NULL) == 0) sw_handler_installed[index] = 1;
    }
    return 0;
}

void sw_temporary_file_forget(void) {
    atomic_store(&sw_temporary_armed, 0);
    for (size_t index = 0; index < SW_ENDING_SIGNAL_COUNT; index++) {
        if (!sw_handler_installed[index]) continue;
        struct sigaction fallback;
        memset(&fallback, 0, sizeof fallback);
        fallback.sa_handler = SIG_DFL;
        sigemptyset(&fallback.sa_mask);
        sigaction(sw_ending_signals[index], &fallback, NULL);
        sw_handler_installed[index] = 0;
    }
}
