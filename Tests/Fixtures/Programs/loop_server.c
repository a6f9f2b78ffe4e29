// The kernel source's test workload (Tests/EndToEndTests/KernelSourceTests.swift): an epoll server thread named
// `epoll-loop` on loopback, under keep-alive load from client threads in the same process, with a few slow handlers at
// known times: CPU-bound (`cpu`), or waiting in a nested poll() on a pipe nobody writes to (`nested`). Each slow
// handler's real start and length go to stderr, and the requests served per second at the end.
// Usage: loop_server SECONDS CLIENTS [OPTION...], each OPTION one of cpu:AT_MS:LENGTH_MS or nested:AT_MS:LENGTH_MS (a
// slow handler), work:MICROSECONDS (CPU work in every handler, for Scripts/bench), idle:N (N more epoll loop threads,
// `idle-loop`, that never wake), hog (a thread, `cpu-hog`, that spins the whole run: pinned to one CPU with the loop,
// it takes half of it).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static unsigned long long now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static int port;
static double end_at;
static atomic_ulong served;
static double work_seconds;

__attribute__((noinline)) static void slow_cpu(double seconds) { volatile unsigned long x = 0; double end = now() + seconds; while (now() < end) x++; }
__attribute__((noinline)) static void slow_nested_poll(double seconds) {
    int p[2]; pipe(p); struct pollfd f = {.fd = p[0], .events = POLLIN}; poll(&f, 1, (int)(seconds * 1000)); close(p[0]); close(p[1]);
}

static void handle(int fd) {
    char request[64];
    ssize_t n = read(fd, request, sizeof request - 1);
    if (n <= 0) { close(fd); return; }
    request[n] = 0;
    char kind[16]; int length = 0;
    if (sscanf(request, "%15[a-z]:%d", kind, &length) == 2 && length > 0) {
        unsigned long long start = now_ns();
        if (strcmp(kind, "cpu") == 0) slow_cpu(length / 1000.0); else slow_nested_poll(length / 1000.0);
        fprintf(stderr, "loop_server: slow kind=%s start_ns=%llu duration_ms=%.3f\n", kind, start, (now_ns() - start) / 1e6);
    }
    if (work_seconds > 0) slow_cpu(work_seconds);
    atomic_fetch_add(&served, 1);
    write(fd, "ok", 2);
}

static void *serve(void *listener_pointer) {
    pthread_setname_np(pthread_self(), "epoll-loop");
    int listener = *(int *)listener_pointer;
    int epoll = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    struct epoll_event events[64];
    while (now() < end_at + 0.5) {
        int ready = epoll_wait(epoll, events, 64, 100);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client = accept(listener, 0, 0);
                int one = 1; setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct epoll_event e = {.events = EPOLLIN, .data.fd = client};
                epoll_ctl(epoll, EPOLL_CTL_ADD, client, &e);
            } else handle(fd);
        }
    }
    return 0;
}

static int connect_loopback(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    connect(fd, (struct sockaddr *)&address, sizeof address);
    int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void *client(void *unused) {
    int fd = connect_loopback(); char answer[8];
    while (now() < end_at) { write(fd, "x", 1); if (read(fd, answer, sizeof answer) <= 0) break; }
    close(fd); return 0;
}

static void *hog(void *unused) {
    pthread_setname_np(pthread_self(), "cpu-hog");
    slow_cpu(end_at - now());
    return 0;
}

static void *idle_loop(void *unused) {
    pthread_setname_np(pthread_self(), "idle-loop");
    int epoll = epoll_create1(0);
    struct epoll_event event;
    while (now() < end_at + 0.5) epoll_wait(epoll, &event, 1, 1000);
    close(epoll);
    return 0;
}

struct slow { char request[32]; double at; };
static void *slow_client(void *pointer) {
    struct slow *slow = pointer; double start = now();
    int fd = connect_loopback(); char answer[8];
    while (now() < start + slow->at) usleep(1000);
    write(fd, slow->request, strlen(slow->request)); read(fd, answer, sizeof answer);
    close(fd); return 0;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 3; int clients = argc > 2 ? atoi(argv[2]) : 4;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(listener, (struct sockaddr *)&address, sizeof address); listen(listener, 128);
    socklen_t size = sizeof address; getsockname(listener, (struct sockaddr *)&address, &size); port = ntohs(address.sin_port);
    double started = now(); end_at = started + seconds;
    pthread_t server; pthread_create(&server, 0, serve, &listener);
    pthread_t threads[64]; for (int i = 0; i < clients && i < 64; i++) pthread_create(&threads[i], 0, client, 0);
    pthread_t slow_threads[16]; struct slow slows[16]; int count = 0;
    for (int i = 3; i < argc; i++) {
        int value;
        if (sscanf(argv[i], "work:%d", &value) == 1) work_seconds = value / 1e6;
        if (strcmp(argv[i], "hog") == 0) { pthread_t spinner; pthread_create(&spinner, 0, hog, 0); pthread_detach(spinner); }
        if (sscanf(argv[i], "idle:%d", &value) == 1) {
            pthread_attr_t small; pthread_attr_init(&small); pthread_attr_setstacksize(&small, 64 * 1024);
            for (int n = 0; n < value; n++) { pthread_t idle; if (pthread_create(&idle, &small, idle_loop, 0) == 0) pthread_detach(idle); }
        }
    }
    for (int i = 3; i < argc && count < 16; i++) {
        char kind[16]; int at, length;
        if (sscanf(argv[i], "%15[a-z]:%d:%d", kind, &at, &length) != 3) continue;
        snprintf(slows[count].request, sizeof slows[count].request, "%s:%d", kind, length); slows[count].at = at / 1000.0;
        pthread_create(&slow_threads[count], 0, slow_client, &slows[count]); count++;
    }
    for (int i = 0; i < clients && i < 64; i++) pthread_join(threads[i], 0);
    for (int i = 0; i < count; i++) pthread_join(slow_threads[i], 0);
    fprintf(stderr, "loop_server: served=%lu per_second=%.0f\n", atomic_load(&served), atomic_load(&served) / seconds);
    pthread_join(server, 0);
    return 0;
}
