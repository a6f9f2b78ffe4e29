#include "CLibraryUser.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

int library_user_make_non_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int library_user_fork(void) { return fork(); }

int library_user_scrape(int port, char *buffer, int size) {
    int descriptor = socket(AF_INET, SOCK_STREAM, 0);
    if (descriptor < 0) return -1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval timeout = {.tv_sec = 5};
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const char *request = "GET /metrics HTTP/1.1\r\nHost: app\r\n\r\n";
    int length = 0;
    if (connect(descriptor, (struct sockaddr *)&address, sizeof address) == 0 &&
        send(descriptor, request, strlen(request), MSG_NOSIGNAL) > 0) {
        long count;
        while (length < size - 1 && (count = recv(descriptor, buffer + length, (size_t)(size - 1 - length), 0)) > 0)
            length += (int)count;
    } else {
        length = -1;
    }
    close(descriptor);
    if (length >= 0) buffer[length] = 0;
    return length;
}
