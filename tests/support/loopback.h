/* loopback.h -- a scripted HTTP server's socket for client tests: a
 * listener on an ephemeral loopback port served by one thread, and a port
 * nothing listens on.
 *
 *   static void *serve(void *arg) { for (;;) { int fd = accept(l.fd, ...); ... } }
 *   struct loopback l;
 *   cr_assert_eq(loopback_start(&l, serve), 0);  ... l.port ...
 *   loopback_stop(&l);  (accept() then fails and serve must return)
 * and, in serve, loopback_read_request(fd, buf, sizeof buf) for what came.
 */
#ifndef DV_TEST_LOOPBACK_H
#define DV_TEST_LOOPBACK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct loopback {
    int fd;
    int port;
    pthread_t thread;
};

/* Listens on 127.0.0.1:<ephemeral> and starts `serve` on its own thread.
 * Returns 0, or -1 (nothing to clean up then). */
static inline int loopback_start(struct loopback *l, void *(*serve)(void *)) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    l->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l->fd < 0) return -1;
    if (bind(l->fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(l->fd, (struct sockaddr *)&a, &len) != 0 ||
        listen(l->fd, 16) != 0 || pthread_create(&l->thread, NULL, serve, l) != 0) {
        close(l->fd);
        return -1;
    }
    l->port = ntohs(a.sin_port);
    return 0;
}

/* Stops the listener and waits for its thread. */
static inline void loopback_stop(struct loopback *l) {
    shutdown(l->fd, SHUT_RDWR);
    close(l->fd);
    pthread_join(l->thread, NULL);
}

/* Reads one request from `fd` into buf[len] (NUL-terminated): up to the
 * end of its headers and the Content-Length bytes of body after them, or
 * only what came first when that is a TLS handshake record (0x16), which
 * no plain-HTTP answer will satisfy. Returns the bytes read. */
static inline size_t loopback_read_request(int fd, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    while (n < len - 1) {
        ssize_t r = read(fd, buf + n, len - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        buf[n] = '\0';
        if (buf[0] == 0x16) break;
        const char *end = strstr(buf, "\r\n\r\n"), *cl = strstr(buf, "Content-Length: ");
        if (end && (!cl || cl > end || n >= (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10))) break;
    }
    return n;
}

/* A loopback port that was free a moment ago and has no listener. */
static inline int loopback_dead_port(void) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0;
    close(fd);
    return ok ? ntohs(a.sin_port) : -1;
}

#endif /* DV_TEST_LOOPBACK_H */
