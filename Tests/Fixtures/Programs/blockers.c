// Who blocked it (Tests/EndToEndTests/BlockerTests.swift): a main thread that runs an epoll loop, then blocks in one
// handler on something another thread or process holds, then loops again and exits. What it blocked on, and who held
// it, goes to stderr as `blockers: key=value ...` lines, so the tests compare the report with the truth.
// Usage: blockers SCENARIO [LOOP_MS], LOOP_MS the loop's time before the stall (600 by default), SCENARIO one of:
//   mutex     a thread named `holder` holds a pthread mutex while it sleeps in nanosleep; main blocks on it
//   pi        the same with a PTHREAD_PRIO_INHERIT mutex (FUTEX_LOCK_PI)
//   abba      main holds A and wants B; `worker` holds B and wants A: a deadlock, ended by a watchdog's _exit
//   child     main waits (waitpid) for a child, `blockers child-sleep 900`, that sleeps
//   children  main waits for any child (waitpid -1) of two that sleep
//   forged    main blocks on a mutex whose owner field names its parent (a thread of another process, under run
//             stallwatch itself); a thread frees it after 1.2 s
//   child-sleep MS   (the children) sleep MS milliseconds
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static int epoll_descriptor;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static sem_t go, taken;

/// The event loop at rest: short epoll waits on nothing, for `seconds`.
static void run_loop(double seconds) {
    struct epoll_event event;
    double end = now() + seconds;
    while (now() < end) epoll_wait(epoll_descriptor, &event, 1, 50);
}

static void sleep_ms(int milliseconds) { usleep(milliseconds * 1000); }

__attribute__((noinline)) static void hold_while_sleeping(pthread_mutex_t *mutex) {
    pthread_mutex_lock(mutex);
    sem_post(&taken);
    sleep_ms(1200);
    pthread_mutex_unlock(mutex);
}

static void *holder_thread(void *mutex) {
    pthread_setname_np(pthread_self(), "holder");
    fprintf(stderr, "blockers: holder tid=%ld name=holder\n", (long)syscall(SYS_gettid));
    sem_wait(&go);
    hold_while_sleeping(mutex);
    return NULL;
}

__attribute__((noinline)) static void wait_for_holder(pthread_mutex_t *mutex) {
    pthread_mutex_lock(mutex);
    pthread_mutex_unlock(mutex);
}

static void *worker_thread(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "worker");
    fprintf(stderr, "blockers: worker tid=%ld name=worker\n", (long)syscall(SYS_gettid));
    sem_wait(&go);
    pthread_mutex_lock(&lock_b);
    sem_post(&taken);
    sleep_ms(100);
    pthread_mutex_lock(&lock_a);
    return NULL;
}

__attribute__((noinline)) static void take_both_locks(void) {
    pthread_mutex_lock(&lock_a);
    sem_post(&go);
    sem_wait(&taken);
    pthread_mutex_lock(&lock_b);
}

static void *watchdog(void *seconds) {
    sleep_ms((int)(long)seconds * 1000);
    fprintf(stderr, "blockers: watchdog exit\n");
    _exit(0);
}

static pid_t start_child(const char *milliseconds) {
    pid_t child = fork();
    if (child == 0) {
        execl("/proc/self/exe", "blockers", "child-sleep", milliseconds, (char *)NULL);
        _exit(127);
    }
    fprintf(stderr, "blockers: child pid=%d sleep=%s\n", child, milliseconds);
    return child;
}

__attribute__((noinline)) static void wait_for_child(pid_t child) { waitpid(child, NULL, 0); }

static pthread_mutex_t forged = PTHREAD_MUTEX_INITIALIZER;

/// Frees the forged mutex as its unlock would: the word to 0, then a wake for its waiter.
static void *free_forged(void *unused) {
    (void)unused;
    sleep_ms(1200);
    forged.__data.__owner = 0;
    __atomic_store_n(&forged.__data.__lock, 0, __ATOMIC_RELEASE);
    syscall(SYS_futex, &forged.__data.__lock, 1 | 128, 1, NULL, NULL, 0);
    return NULL;
}

__attribute__((noinline)) static void wait_for_any_child(void) {
    while (waitpid(-1, NULL, 0) > 0) {}
}

int main(int argc, char **argv) {
    if (argc < 2) return 64;
    if (strcmp(argv[1], "child-sleep") == 0) {
        sleep_ms(argc > 2 ? atoi(argv[2]) : 900);
        return 0;
    }
    double loop = argc > 2 ? atoi(argv[2]) / 1000.0 : 0.6;
    epoll_descriptor = epoll_create1(0);
    sem_init(&go, 0, 0);
    sem_init(&taken, 0, 0);
    fprintf(stderr, "blockers: main tid=%d\n", getpid());
    pthread_t thread;
    if (strcmp(argv[1], "mutex") == 0 || strcmp(argv[1], "pi") == 0) {
        static pthread_mutex_t shared;
        pthread_mutexattr_t attributes;
        pthread_mutexattr_init(&attributes);
        if (strcmp(argv[1], "pi") == 0) pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT);
        pthread_mutex_init(&shared, &attributes);
        fprintf(stderr, "blockers: lock address=%p\n", (void *)&shared);
        pthread_create(&thread, NULL, holder_thread, &shared);
        run_loop(loop);
        sem_post(&go);
        sem_wait(&taken);
        wait_for_holder(&shared);
        run_loop(0.3);
        pthread_join(thread, NULL);
    } else if (strcmp(argv[1], "abba") == 0) {
        fprintf(stderr, "blockers: lock a=%p b=%p\n", (void *)&lock_a, (void *)&lock_b);
        pthread_create(&thread, NULL, worker_thread, NULL);
        pthread_t timer;
        pthread_create(&timer, NULL, watchdog, (void *)(long)(loop + 3));
        run_loop(loop);
        take_both_locks();
    } else if (strcmp(argv[1], "child") == 0) {
        run_loop(loop);
        wait_for_child(start_child("900"));
        run_loop(0.3);
    } else if (strcmp(argv[1], "children") == 0) {
        run_loop(loop);
        start_child("900");
        start_child("1000");
        wait_for_any_child();
        run_loop(0.3);
    } else if (strcmp(argv[1], "forged") == 0) {
        // Taken, with waiters, by the parent: no thread of this process holds it.
        forged.__data.__lock = 2;
        forged.__data.__owner = getppid();
        fprintf(stderr, "blockers: forged owner=%d\n", getppid());
        pthread_create(&thread, NULL, free_forged, NULL);
        run_loop(loop);
        wait_for_holder(&forged);
        run_loop(0.3);
        pthread_join(thread, NULL);
    } else {
        return 64;
    }
    fprintf(stderr, "blockers: done\n");
    return 0;
}
