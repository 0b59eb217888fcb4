/* helper_http.c -- see helper_http.h. Requests go through core/httpclient,
 * the client the product uses; only helper_raw() writes to a socket itself,
 * because its bytes are the ones a client would refuse or normalise. */
#define _GNU_SOURCE
#include "kernels/base/status.h"
#include "kernels/base/timeutil.h"
#include "server/core/httpclient.h"
#include "tests/support/helper_http.h"
#include "tests/support/readfile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef DV_TEST_BINARY
#define DV_TEST_BINARY "divergence"
#endif
#ifndef DV_TEST_BUILD_DIR
#define DV_TEST_BUILD_DIR "."
#endif

extern char **environ;

void helper_sleep_ms(long ms) { timeutil_sleep_ms((double)ms); }

char *helper_server_log(const struct helper_server *s) {
    char *log = readfile(s->log, NULL);
    return log ? log : strdup("");
}

int helper_server_start(struct helper_server *s, const char *const *args, const char *const *env) {
    memset(s, 0, sizeof *s);
    snprintf(s->log, sizeof s->log, "/tmp/dv-test-serve-XXXXXX");
    int fd = mkstemp(s->log);
    if (fd < 0) return -1;
    const char *argv[64];
    int n = 0, has_worker = 0;
    static char worker[512];
    snprintf(worker, sizeof worker, "%s/tests/fake_worker", DV_TEST_BUILD_DIR);
    argv[n++] = DV_TEST_BINARY;
    argv[n++] = "serve";
    argv[n++] = "--port";
    argv[n++] = "0";
    for (int i = 0; args && args[i] && n < 60; i++) {
        if (strcmp(args[i], "--worker-cmd") == 0) has_worker = 1;
        argv[n++] = args[i];
    }
    if (!has_worker && n < 62) {
        argv[n++] = "--worker-cmd";
        argv[n++] = worker;
    }
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fd, STDERR_FILENO);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            dup2(devnull, STDOUT_FILENO);
        }
        unsetenv("DIVERGENCE_TOKEN");
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fd);
    s->pid = pid;
    long long until = ((long long)timeutil_now_ms()) + 10000;
    while (((long long)timeutil_now_ms()) < until) {
        char *log = helper_server_log(s);
        const char *p = log ? strstr(log, "\nlistening on http://") : NULL;
        if (!p && log && strncmp(log, "listening on http://", 20) == 0) p = log - 1;
        if (p) {
            const char *colon = strchr(p + 21, ':');
            s->port = colon ? (unsigned)atoi(colon + 1) : 0;
        }
        free(log);
        if (s->port) return 0;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            return -1;
        }
        helper_sleep_ms(20);
    }
    return -1;
}

int helper_server_wait_ready(const struct helper_server *s, int want, int timeout_ms) {
    long long until = ((long long)timeutil_now_ms()) + timeout_ms;
    while (((long long)timeutil_now_ms()) < until) {
        struct helper_response r;
        int ok = helper_request(s->port, "GET", "/readyz", NULL, NULL, 0, &r) == 0 && r.status == want;
        helper_response_free(&r);
        if (ok) return 0;
        helper_sleep_ms(20);
    }
    return -1;
}

int helper_server_stop(struct helper_server *s, int timeout_ms) {
    if (s->pid <= 0) return -1;
    kill(s->pid, SIGTERM);
    long long until = ((long long)timeutil_now_ms()) + timeout_ms;
    int st = 0;
    pid_t r;
    while ((r = waitpid(s->pid, &st, WNOHANG)) == 0 && ((long long)timeutil_now_ms()) < until) helper_sleep_ms(10);
    if (r == 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &st, 0);
        s->pid = 0;
        return 128 + SIGKILL;
    }
    s->pid = 0;
    if (r < 0) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int helper_raw(unsigned port, const char *raw, size_t len, struct helper_response *r) {
    memset(r, 0, sizeof *r);
    r->status = -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    /* The server may answer (413, 401) and close before taking the whole
     * body: stop sending then, and read what it said. */
    size_t off = 0;
    while (off < len) {
        struct pollfd p = {.fd = fd, .events = POLLOUT | POLLIN};
        if (poll(&p, 1, 5000) <= 0) break;
        if (p.revents & (POLLIN | POLLERR | POLLHUP)) break;
        ssize_t w = send(fd, raw + off, len - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    long long until = ((long long)timeutil_now_ms()) + 15000;
    while (buf && ((long long)timeutil_now_ms()) < until) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) < 0) break;
        ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (got <= 0) break;
        n += (size_t)got;
        if (cap - n < 2) {
            char *b = realloc(buf, cap * 2);
            if (!b) break;
            buf = b;
            cap *= 2;
        }
    }
    close(fd);
    if (!buf) return -1;
    buf[n] = '\0';
    char *sep = strstr(buf, "\r\n\r\n");
    if (n < 12 || strncmp(buf, "HTTP/1.", 7) != 0 || !sep) {
        free(buf);
        return -1;
    }
    r->status = atoi(buf + 9);
    *sep = '\0';
    r->headers = buf;
    r->body = strdup(sep + 4);
    r->len = n - (size_t)(sep + 4 - buf);
    return 0;
}

int helper_request(unsigned port, const char *method, const char *path, const char *headers,
                   const char *body, size_t len, struct helper_response *r) {
    memset(r, 0, sizeof *r);
    r->status = -1;
    char url[1024], err[ERR_LEN];
    if ((size_t)snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path) >= sizeof url) return -1;
    /* The path goes as written ("/static/%2e%2e/x" is the server's to judge)
     * and straight to the loopback server, whatever proxy the environment names. */
    /* The server takes POST bodies only as JSON; a test of that sends its
     * own Content-Type. */
    char hbuf[4096];
    if (strcmp(method, "POST") == 0 && !(headers && strcasestr(headers, "Content-Type:"))) {
        if ((size_t)snprintf(hbuf, sizeof hbuf, "%sContent-Type: application/json\r\n", headers ? headers : "") >=
            sizeof hbuf)
            return -1;
        headers = hbuf;
    }
    struct httpclient_request q = {.method = method, .url = url, .headers = headers, .body = body, .len = len,
                                   .timeout_ms = 15000, .no_proxy = 1, .path_as_is = 1};
    struct httpclient_response a;
    if (httpclient_send(&q, &a, err) != 0) {
        fprintf(stderr, "helper_request: %s\n", err);
        return -1;
    }
    r->status = (int)a.status;
    r->headers = a.headers;
    r->body = a.body;
    r->len = a.len;
    return 0;
}

const char *helper_header(const struct helper_response *r, const char *name, char *buf, size_t len) {
    struct httpclient_response a = {.status = r->status, .headers = r->headers, .body = r->body, .len = r->len};
    return httpclient_header(&a, name, buf, len);
}

json_t *helper_json(const struct helper_response *r) {
    if (!r->body) return NULL;
    return json_loads(r->body, 0, NULL);
}

void helper_response_free(struct helper_response *r) {
    free(r->headers);
    free(r->body);
    r->headers = r->body = NULL;
}

json_t *helper_wait_job(unsigned port, const char *id, int timeout_ms) {
    char path[128];
    snprintf(path, sizeof path, "/jobs/%s", id);
    long long until = ((long long)timeutil_now_ms()) + timeout_ms;
    while (((long long)timeutil_now_ms()) < until) {
        struct helper_response r;
        if (helper_request(port, "GET", path, NULL, NULL, 0, &r) == 0 && r.status == 200) {
            json_t *j = helper_json(&r);
            const char *st = json_string_value(json_object_get(j, "state"));
            if (st && (strcmp(st, "done") == 0 || strcmp(st, "failed") == 0)) {
                helper_response_free(&r);
                return j;
            }
            json_decref(j);
        }
        helper_response_free(&r);
        helper_sleep_ms(25);
    }
    return NULL;
}
