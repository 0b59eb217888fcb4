/* test_sdnotify.c -- the notify datagram reaches the socket systemd names,
 * abstract or not, and the watchdog interval is read as systemd sets it. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/core/sdnotify.h"

static int listen_at(const char *name, int abstract) {
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    cr_assert(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path + (abstract ? 1 : 0), name, strlen(name));
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name) + (abstract ? 1 : 0));
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, len), 0);
    return fd;
}

static void expect(int fd, const char *want) {
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    cr_assert(n > 0, "nothing received");
    buf[n] = '\0';
    cr_assert_str_eq(buf, want);
}

Test(sdnotify, no_socket_is_a_no_op) {
    unsetenv("NOTIFY_SOCKET");
    cr_assert_eq(sdnotify_send("READY=1"), 0);
}

Test(sdnotify, sends_to_a_path_socket) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/dv-notify-%ld", (long)getpid());
    unlink(path);
    int fd = listen_at(path, 0);
    setenv("NOTIFY_SOCKET", path, 1);
    cr_assert_eq(sdnotify_send("READY=1\nSTATUS=listening"), 1);
    expect(fd, "READY=1\nSTATUS=listening");
    close(fd);
    unlink(path);
}

Test(sdnotify, sends_to_an_abstract_socket) {
    char name[64], env[70];
    snprintf(name, sizeof name, "dv-notify-test-%ld", (long)getpid());
    int fd = listen_at(name, 1);
    snprintf(env, sizeof env, "@%s", name);
    setenv("NOTIFY_SOCKET", env, 1);
    cr_assert_eq(sdnotify_send("WATCHDOG=1"), 1);
    expect(fd, "WATCHDOG=1");
    close(fd);
}

Test(sdnotify, relative_socket_path_is_an_error) {
    setenv("NOTIFY_SOCKET", "relative/path", 1);
    cr_assert_eq(sdnotify_send("READY=1"), -1);
}

Test(sdnotify, watchdog_interval_for_this_process_only) {
    unsetenv("WATCHDOG_USEC");
    cr_assert_eq(sdnotify_watchdog_ms(), 0);
    setenv("WATCHDOG_USEC", "30000000", 1);
    unsetenv("WATCHDOG_PID");
    cr_assert_eq(sdnotify_watchdog_ms(), 30000);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    cr_assert_eq(sdnotify_watchdog_ms(), 30000);
    setenv("WATCHDOG_PID", "1", 1);
    cr_assert_eq(sdnotify_watchdog_ms(), 0);
    setenv("WATCHDOG_PID", pid, 1);
    setenv("WATCHDOG_USEC", "junk", 1);
    cr_assert_eq(sdnotify_watchdog_ms(), 0);
}
