// Who is at the other end (Tests/EndToEndTests/DescriptorBlockerTests.swift): a main thread that runs an epoll loop,
// then blocks in one handler reading a pipe or a TCP socket whose other end another process holds and leaves quiet,
// then loops again and exits. The truth goes to stderr as `descriptors: key=value ...` lines.
// Usage: descriptor_waits SCENARIO, SCENARIO one of:
//   pipe   main reads a pipe whose write end only a child, `descriptor_waits quiet-writer 900`, holds; it sleeps
//          900 ms and exits without writing
//   tcp    main sends a request to a child, `descriptor_waits slow-server FD`, listening on 127.0.0.1 and reads the
//          reply, which the server sends after 900 ms
//   unix   main reads a Unix socketpair whose other end only a child, `descriptor_waits quiet-writer 900`, holds
//   fifo DIR   main reads DIR/fifo, which it makes, while a child, `descriptor_waits fifo-writer DIR/fifo`, holds it
//          open for writing and sleeps 900 ms
//   quiet-writer MS / slow-server FD / fifo-writer PATH   (the children)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static int epoll_descriptor;

/// The event loop at rest: short epoll waits on nothing, for `seconds`.
static void run_loop(double seconds) {
    struct epoll_event event;
    double end = now() + seconds;
    while (now() < end) epoll_wait(epoll_descriptor, &event, 1, 50);
}

static void sleep_ms(int milliseconds) { usleep(milliseconds * 1000); }

__attribute__((noinline)) static void read_from_peer(int descriptor) {
    char byte;
    while (read(descriptor, &byte, 1) < 0) {}
}

__attribute__((noinline)) static void receive_reply(int descriptor) {
    char byte;
    while (recv(descriptor, &byte, 1, 0) < 0) {}
}

static pid_t spawn(const char *role, const char *argument) {
    pid_t child = fork();
    if (child == 0) {
        execl("/proc/self/exe", "descriptor_waits", role, argument, (char *)NULL);
        _exit(127);
    }
    return child;
}

/// Accepts one connection, reads the request, answers after 900 ms.
static int slow_server(int listener) {
    int connection = accept(listener, NULL, NULL);
    char byte;
    if (connection < 0 || read(connection, &byte, 1) != 1) return 1;
    sleep_ms(900);
    if (write(connection, "y", 1) != 1) return 1;
    sleep_ms(200);
    return 0;
}

static int pipe_scenario(void) {
    int ends[2];
    if (pipe(ends) != 0) return 1;
    struct stat info;
    fstat(ends[0], &info);
    char writer[16];
    snprintf(writer, sizeof writer, "%d", ends[1]);
    run_loop(0.6);
    pid_t child = spawn("quiet-writer", "900");
    close(ends[1]);
    fprintf(stderr, "descriptors: pipe inode=%lu fd=%d\n", (unsigned long)info.st_ino, ends[0]);
    fprintf(stderr, "descriptors: peer pid=%d\n", child);
    read_from_peer(ends[0]);
    run_loop(0.3);
    return 0;
}

static int unix_scenario(void) {
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0) return 1;
    struct stat mine, theirs;
    fstat(ends[0], &mine);
    fstat(ends[1], &theirs);
    run_loop(0.6);
    pid_t child = spawn("quiet-writer", "900");
    close(ends[1]);
    fprintf(stderr, "descriptors: unix inode=%lu peer_inode=%lu fd=%d\n", (unsigned long)mine.st_ino,
            (unsigned long)theirs.st_ino, ends[0]);
    fprintf(stderr, "descriptors: peer pid=%d\n", child);
    receive_reply(ends[0]);
    run_loop(0.3);
    return 0;
}

static int fifo_scenario(const char *directory) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fifo", directory);
    if (mkfifo(path, 0600) != 0) return 1;
    run_loop(0.6);
    pid_t child = spawn("fifo-writer", path);
    // Blocks until the child has opened its end.
    int descriptor = open(path, O_RDONLY);
    if (descriptor < 0) return 1;
    fprintf(stderr, "descriptors: fifo path=%s fd=%d\n", path, descriptor);
    fprintf(stderr, "descriptors: peer pid=%d\n", child);
    read_from_peer(descriptor);
    run_loop(0.3);
    unlink(path);
    return 0;
}

static int tcp_scenario(void) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0) return 1;
    getsockname(listener, (struct sockaddr *)&address, &length);
    char argument[16];
    snprintf(argument, sizeof argument, "%d", listener);
    run_loop(0.6);
    pid_t child = spawn("slow-server", argument);
    close(listener);
    int client = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(client, (struct sockaddr *)&address, sizeof address) != 0) return 1;
    struct sockaddr_in local;
    length = sizeof local;
    getsockname(client, (struct sockaddr *)&local, &length);
    fprintf(stderr, "descriptors: tcp local=127.0.0.1:%d remote=127.0.0.1:%d fd=%d\n", ntohs(local.sin_port),
            ntohs(address.sin_port), client);
    fprintf(stderr, "descriptors: peer pid=%d\n", child);
    if (write(client, "x", 1) != 1) return 1;
    receive_reply(client);
    run_loop(0.3);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 64;
    if (strcmp(argv[1], "quiet-writer") == 0 || strcmp(argv[1], "slow-server") == 0) prctl(PR_SET_NAME, argv[1]);
    if (strcmp(argv[1], "quiet-writer") == 0) {
        sleep_ms(argc > 2 ? atoi(argv[2]) : 900);
        return 0;
    }
    if (strcmp(argv[1], "slow-server") == 0) return argc > 2 ? slow_server(atoi(argv[2])) : 64;
    if (strcmp(argv[1], "fifo-writer") == 0) {
        prctl(PR_SET_NAME, argv[1]);
        if (argc < 3 || open(argv[2], O_WRONLY) < 0) return 1;
        sleep_ms(900);
        return 0;
    }
    epoll_descriptor = epoll_create1(0);
    fprintf(stderr, "descriptors: main tid=%d\n", getpid());
    int status = 64;
    if (strcmp(argv[1], "pipe") == 0) status = pipe_scenario();
    if (strcmp(argv[1], "tcp") == 0) status = tcp_scenario();
    if (strcmp(argv[1], "unix") == 0) status = unix_scenario();
    if (strcmp(argv[1], "fifo") == 0) status = argc > 2 ? fifo_scenario(argv[2]) : 64;
    if (status == 0) fprintf(stderr, "descriptors: done\n");
    return status;
}
