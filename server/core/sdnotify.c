/* sdnotify.c -- see sdnotify.h. What the protocol asks of a sender: an
 * abstract socket name starts with '@' (sent as a leading NUL, which is how
 * the kernel spells one), the message is one datagram (the manager reads
 * each as a whole set of lines), and the environment is left as it is, so
 * that a re-exec still finds the socket and the watchdog's interval. */
#define _GNU_SOURCE
#include "server/core/sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int sdnotify_send(const char *state) {
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !path[0]) return 0;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof sa.sun_path) return -1;
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@') sa.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    ssize_t w = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    int saved = errno;
    close(fd);
    errno = saved;
    return w == (ssize_t)strlen(state) ? 1 : -1;
}

unsigned long sdnotify_watchdog_ms(void) {
    const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
    if (!us || !us[0]) return 0;
    if (pid && pid[0] && strtol(pid, NULL, 10) != (long)getpid()) return 0;
    char *end;
    unsigned long long v = strtoull(us, &end, 10);
    if (*end || v == 0) return 0;
    return (unsigned long)(v / 1000 ? v / 1000 : 1);
}
