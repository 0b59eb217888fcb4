/* subproc.c -- a program run with its stdout taken, under a deadline
 * (subproc.h).
 *
 * fork() then, in the child, only async-signal-safe calls (dup2, close,
 * fcntl, execv, write, _exit): the caller may have threads (a CUDA context
 * has some) whose locks a child must not touch. Whether the exec worked
 * comes back through a close-on-exec pipe: nothing arrives when it did, the
 * errno when it did not. The parent polls the child's stdin and stdout
 * together until the output ends, then reaps the child; past the deadline
 * (or past SUBPROC_MAX_OUTPUT) it sends SIGKILL first.
 */
#define _GNU_SOURCE
#include "server/core/subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "kernels/base/timeutil.h"

/* In the child: stdin from `in`, stdout to `out`, the exec report on fd 3,
 * every other descriptor from 3 up closed, then the program. */
static void child_exec(const char *const *argv, int in, int out, int report) {
    int e = 0;
    /* Move the three out of the way of 0, 1 and 3 first. */
    int hi_in = fcntl(in, F_DUPFD, 10), hi_out = fcntl(out, F_DUPFD, 10), hi_rep = fcntl(report, F_DUPFD, 10);
    if (hi_in < 0 || hi_out < 0 || hi_rep < 0 || dup2(hi_in, 0) < 0 || dup2(hi_out, 1) < 0 || dup2(hi_rep, 3) < 0) {
        e = errno;
        goto fail;
    }
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (long fd = 4; fd < max; fd++) close((int)fd);
    if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0) {
        e = errno;
        goto fail;
    }
    execv(argv[0], (char *const *)argv);
    e = errno;
fail:
    if (write(3, &e, sizeof e) < 0) _exit(127);
    _exit(127);
}

static int grow(struct subproc_result *res, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 65536;
    while (c < need) c *= 2;
    char *p = realloc(res->out, c);
    if (!p) return -1;
    res->out = p;
    *cap = c;
    return 0;
}

/* Feeds `input` to the child's stdin (*in_w, closed when all is sent or the
 * child closed its end) and reads its stdout (*out_r, closed at its end)
 * into res->out, until the output ends, the deadline passes or the output
 * grows past SUBPROC_MAX_OUTPUT (both set *killed). -1 when out of memory. */
static int pump(int *in_w, int *out_r, const void *input, size_t len, double deadline_ms, double t0,
                struct subproc_result *res, size_t *cap, int *killed) {
    size_t sent = 0;
    if (grow(res, cap, 1) != 0) return -1;
    while (*out_r >= 0) {
        struct pollfd pf[2];
        int n = 0;
        pf[n++] = (struct pollfd){.fd = *out_r, .events = POLLIN};
        if (*in_w >= 0) pf[n++] = (struct pollfd){.fd = *in_w, .events = POLLOUT};
        int timeout = -1;
        if (deadline_ms > 0) {
            const double left = deadline_ms - (timeutil_now_ms() - t0);
            if (left <= 0) {
                *killed = 1;
                return 0;
            }
            timeout = left > 1e9 ? 1000000000 : (int)left + 1;
        }
        int k = poll(pf, (nfds_t)n, timeout);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            *killed = 1; /* cannot wait on it any more: end it */
            return 0;
        }
        if (n > 1 && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(*in_w, (const char *)input + sent, len - sent);
            if (w > 0) sent += (size_t)w;
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == len) {
                close(*in_w); /* all sent, or the child closed its stdin */
                *in_w = -1;
            }
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            if (grow(res, cap, res->len + 65536 + 1) != 0) return -1;
            ssize_t got = read(*out_r, res->out + res->len, *cap - res->len - 1);
            if (got > 0) res->len += (size_t)got;
            else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(*out_r);
                *out_r = -1;
            }
            if (res->len > SUBPROC_MAX_OUTPUT) {
                *killed = 1;
                return 0;
            }
        }
    }
    return 0;
}

/* Waits for `pid` (killed first when `killed`) and says how it ended. */
static void reap(pid_t pid, int killed, double t0, struct subproc_result *res) {
    if (killed) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    res->ms = timeutil_now_ms() - t0;
    res->out[res->len] = '\0';
    if (killed) {
        res->how = SUBPROC_KILLED;
        res->status = SIGKILL;
    } else if (WIFSIGNALED(status)) {
        res->how = SUBPROC_SIGNALED;
        res->status = WTERMSIG(status);
    } else {
        res->how = SUBPROC_EXITED;
        res->status = WEXITSTATUS(status);
    }
}

int subproc_run(const char *const *argv, const void *input, size_t len, double deadline_ms, struct subproc_result *res,
                char *err) {
    memset(res, 0, sizeof *res);
    int in[2] = {-1, -1}, out[2] = {-1, -1}, rep[2] = {-1, -1};
    if (!argv || !argv[0]) {
        dv_seterr(err, "subproc: no program");
        return -1;
    }
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0) {
        dv_seterr(err, "subproc: pipe: %s", strerror(errno));
        goto fail;
    }
    const double t0 = timeutil_now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        dv_seterr(err, "subproc: fork for %s: %s", argv[0], strerror(errno));
        goto fail;
    }
    if (pid == 0) child_exec(argv, in[0], out[1], rep[1]);
    close(in[0]);
    close(out[1]);
    close(rep[1]);
    in[0] = out[1] = rep[1] = -1;
    int exec_errno = 0;
    ssize_t r;
    while ((r = read(rep[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    close(rep[0]);
    rep[0] = -1;
    if (r == (ssize_t)sizeof exec_errno) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        dv_seterr(err, "subproc: cannot run %s: %s", argv[0], strerror(exec_errno));
        goto fail;
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    if (!input || len == 0) {
        close(in[1]);
        in[1] = -1;
    }
    size_t cap = 0;
    int killed = 0;
    if (pump(&in[1], &out[0], input, len, deadline_ms, t0, res, &cap, &killed) != 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        dv_seterr(err, "subproc: out of memory for the output of %s", argv[0]);
        goto fail;
    }
    if (in[1] >= 0) close(in[1]);
    if (out[0] >= 0) close(out[0]);
    in[1] = out[0] = -1;
    reap(pid, killed, t0, res);
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0) close(in[i]);
        if (out[i] >= 0) close(out[i]);
        if (rep[i] >= 0) close(rep[i]);
    }
    subproc_result_cleanup(res);
    return -1;
}

void subproc_result_cleanup(struct subproc_result *res) {
    if (!res) return;
    free(res->out);
    res->out = NULL;
    res->len = 0;
}

void subproc_describe(const struct subproc_result *res, double deadline_ms, char *buf, size_t size) {
    switch (res->how) {
    case SUBPROC_EXITED: snprintf(buf, size, "exit status %d", res->status); break;
    case SUBPROC_SIGNALED: snprintf(buf, size, "signal %d (%s)", res->status, strsignal(res->status)); break;
    case SUBPROC_KILLED:
        if (res->len > SUBPROC_MAX_OUTPUT) snprintf(buf, size, "killed: more than %u bytes of output", SUBPROC_MAX_OUTPUT);
        else snprintf(buf, size, "killed after %.0f ms (its deadline)", deadline_ms);
        break;
    }
}
