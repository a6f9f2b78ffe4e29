// Calls Swift cannot make: prctl is variadic, and fork is unavailable to Swift.
#ifndef C_LIBRARY_USER_H
#define C_LIBRARY_USER_H
/// prctl(PR_SET_DUMPABLE, 0): only a tracer with CAP_SYS_PTRACE may trace the app from now on.
int library_user_make_non_dumpable(void);
/// fork(): the library-mode test forks an app whose monitor runs.
int library_user_fork(void);
/// GET /metrics from 127.0.0.1:`port` (the app scrapes its own STALLWATCH_METRICS endpoint): the whole answer into
/// `buffer`, NUL-terminated; returns its length, or -1.
int library_user_scrape(int port, char *buffer, int size);
#endif
