/* subproc.c -- a program run with its stdout taken, under a deadline
 * (subproc.h).
 *
 * fork() then, in the child, only async-signal-safe calls (setpgid, dup2,
 * close, fcntl, execv, write, _exit): the caller may have threads (a CUDA
 * context has some) whose locks a child must not touch. Whether the exec
 * worked comes back through a close-on-exec pipe: nothing arrives when it
 * did, the errno when it did not.
 *
 * The child leads a process group of its own (setpgid in the child, and in
 * the parent too, so no kill can come before the group exists), and the
 * group is what is killed: whatever the child started ends with it. The
 * parent polls the child's stdin, its stdout and a pidfd (readable when the
 * child ends; on a kernel without pidfds, a 10 ms tick) together, until:
 *   - the output has ended and the child has ended: the usual case;
 *   - the deadline passes while the child lives, EOF or not (a child that
 *     closed stdout and hangs, or is stopped): killed;
 *   - the output passes SUBPROC_MAX_OUTPUT: killed;
 *   - the child has ended but something it started still holds its stdout
 *     SUBPROC_GRACE_MS later: the child is judged by its own exit, and what
 *     it wrote is kept.
 * Whether the child ended is asked with waitid(WNOWAIT), which leaves it a
 * zombie: its pid, the group's id, cannot be reused until it is reaped, so
 * the SIGKILL to the group that always comes first cannot reach a stranger.
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
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "kernels/base/timeutil.h"

#define TICK_MS 10 /* how often a child's end is asked where there is no pidfd */

/* In the child: a process group of its own, stdin from `in`, stdout to
 * `out`, the exec report on fd 3, every other descriptor from 3 up closed,
 * then the program. */
static void child_exec(const char *const *argv, int in, int out, int report, pid_t parent) {
    int e = 0;
    if (setpgid(0, 0) != 0 || (parent > 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)) {
        e = errno;
        if (write(report, &e, sizeof e) < 0) _exit(127);
        _exit(127);
    }
    if (parent > 0 && getppid() != parent) _exit(127); /* the parent died already */
    /* Move the three out of the way of 0, 1 and 3 first. */
    int hi_in = fcntl(in, F_DUPFD, 10), hi_out = fcntl(out, F_DUPFD, 10), hi_rep = fcntl(report, F_DUPFD, 10);
    int rep = report; /* where the report goes: fd 3 once it is there */
    if (hi_in < 0 || hi_out < 0 || hi_rep < 0 || dup2(hi_in, 0) < 0 || dup2(hi_out, 1) < 0 || dup2(hi_rep, 3) < 0) {
        e = errno;
        goto fail;
    }
    rep = 3;
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
    if (write(rep, &e, sizeof e) < 0) _exit(127);
    _exit(127);
}

/* One child's life as the parent sees it. */
struct run {
    pid_t pid;
    int pidfd;         /* readable once the child has ended; -1: none, ticked */
    int in_w, out_r;   /* -1 once closed                                      */
    const char *input; /* `len` bytes, `sent` of them written                 */
    size_t len, sent, cap;
    double t0, deadline_ms, ended_at; /* ended_at: 0 while the child lives  */
    int killed;        /* past the deadline or the output's limit            */
};

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

/* Whether the child has ended, without reaping it. */
static int child_ended(struct run *rn) {
    if (rn->ended_at > 0) return 1;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int rc;
    while ((rc = waitid(P_PID, (id_t)rn->pid, &si, WEXITED | WNOHANG | WNOWAIT)) < 0 && errno == EINTR) {
    }
    /* An error (ECHILD: someone else reaped it) counts as ended too: there
     * is nothing left to wait for. */
    if (rc < 0 || si.si_pid == rn->pid) rn->ended_at = timeutil_now_ms();
    return rn->ended_at > 0;
}

/* The next piece of the input into the child's stdin; closed when all is
 * sent or the child closed its end. */
static void feed(struct run *rn) {
    ssize_t w = write(rn->in_w, rn->input + rn->sent, rn->len - rn->sent);
    if (w > 0) rn->sent += (size_t)w;
    if ((w < 0 && errno != EAGAIN && errno != EINTR) || rn->sent == rn->len) {
        close(rn->in_w);
        rn->in_w = -1;
    }
}

/* What is readable on the child's stdout into res->out; closed at its end.
 * Returns 1 when it read something, 0 when not, -1 when out of memory. */
static int drink(struct run *rn, struct subproc_result *res) {
    if (grow(res, &rn->cap, res->len + 65536 + 1) != 0) return -1;
    ssize_t got = read(rn->out_r, res->out + res->len, rn->cap - res->len - 1);
    if (got > 0) res->len += (size_t)got;
    else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(rn->out_r);
        rn->out_r = -1;
    }
    if (res->len > SUBPROC_MAX_OUTPUT) rn->killed = 1;
    return got > 0;
}

/* The poll timeout until the next thing to decide: the deadline while the
 * child lives, the grace once it has ended, a tick without a pidfd. Sets
 * rn->killed, or returns -2, when there is nothing left to wait for. */
static int wait_ms(struct run *rn) {
    const double now = timeutil_now_ms();
    double left = -1;
    if (rn->ended_at > 0) {
        if (rn->out_r < 0) return -2;
        left = rn->ended_at + SUBPROC_GRACE_MS - now;
        if (left <= 0) return -2; /* a grandchild holds the output: judged by the child */
    } else if (rn->deadline_ms > 0) {
        left = rn->deadline_ms - (now - rn->t0);
        if (left <= 0) {
            rn->killed = 1;
            return -2;
        }
    }
    if (rn->ended_at <= 0 && rn->pidfd < 0 && (left < 0 || left > TICK_MS)) left = TICK_MS;
    if (left < 0) return -1;
    return left > 1e9 ? 1000000000 : (int)left + 1;
}

/* Feeds the input and reads the output until the child and its output have
 * ended, the deadline passes or the output is too long (both set
 * rn->killed), or the grace after the child's end is over. -1 when out of
 * memory. */
static int pump(struct run *rn, struct subproc_result *res) {
    if (grow(res, &rn->cap, 1) != 0) return -1;
    for (;;) {
        const int ended = child_ended(rn);
        const int timeout = wait_ms(rn);
        if (timeout == -2) return 0;
        struct pollfd pf[3];
        int n = 0, io = -1, ii = -1;
        if (rn->out_r >= 0) pf[io = n++] = (struct pollfd){.fd = rn->out_r, .events = POLLIN};
        if (rn->in_w >= 0) pf[ii = n++] = (struct pollfd){.fd = rn->in_w, .events = POLLOUT};
        if (!ended && rn->pidfd >= 0) pf[n++] = (struct pollfd){.fd = rn->pidfd, .events = POLLIN};
        int k = poll(pf, (nfds_t)n, timeout);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            rn->killed = 1; /* cannot wait on it any more: end it */
            return 0;
        }
        if (ii >= 0 && (pf[ii].revents & (POLLOUT | POLLERR | POLLHUP))) feed(rn);
        if (io >= 0 && (pf[io].revents & (POLLIN | POLLHUP | POLLERR))) {
            if (drink(rn, res) < 0) return -1;
            if (rn->killed) return 0;
        }
    }
}

/* SIGKILL to the child's group, sent while the child is unreaped (its id
 * is the group's and cannot be anyone else's yet), then the child reaped.
 * Returns its wait status. */
static int end_group(const struct run *rn) {
    kill(-rn->pid, SIGKILL);
    int status = 0;
    while (waitpid(rn->pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/* Ends the child's group (the child itself still unreaped, so its id is
 * still the group's), reaps the child, takes what is left in the pipe and
 * says how the child ended. */
static void reap(struct run *rn, struct subproc_result *res) {
    const int status = end_group(rn);
    res->ms = timeutil_now_ms() - rn->t0;
    /* What was written before the group died is in the pipe; a writer that
     * left the group may hold it open, so only what is there now. */
    if (rn->out_r >= 0 && !rn->killed && fcntl(rn->out_r, F_SETFL, O_NONBLOCK) == 0)
        while (rn->out_r >= 0 && !rn->killed && drink(rn, res) > 0) {
        }
    res->out[res->len] = '\0';
    if (rn->killed) {
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

/* Closes what is open of the run's descriptors. */
static void run_close(struct run *rn) {
    if (rn->in_w >= 0) close(rn->in_w);
    if (rn->out_r >= 0) close(rn->out_r);
    if (rn->pidfd >= 0) close(rn->pidfd);
    rn->in_w = rn->out_r = rn->pidfd = -1;
}

/* Forks the child of `argv` onto the pipes and waits for its exec's report.
 * Returns its pid, or -1 with `err` ("cannot run PROGRAM: REASON"). */
static pid_t start(const char *const *argv, int in[2], int out[2], int rep[2], pid_t parent, char *err) {
    pid_t pid = fork();
    if (pid < 0) {
        dv_seterr(err, "fork for %s: %s", argv[0], strerror(errno));
        return -1;
    }
    if (pid == 0) child_exec(argv, in[0], out[1], rep[1], parent);
    /* The child does it too; here, so the group exists before any kill
     * whichever runs first (EACCES once it has exec'd: it had done it). */
    setpgid(pid, pid);
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
        dv_seterr(err, "cannot run %s: %s", argv[0], strerror(exec_errno));
        return -1;
    }
    return pid;
}

/* The three pipes; 0, or -1 with `err` (each end -1 or open). */
static int pipes(int in[2], int out[2], int rep[2], char *err) {
    if (pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0 && pipe2(rep, O_CLOEXEC) == 0) return 0;
    dv_seterr(err, "pipe: %s", strerror(errno));
    return -1;
}

static void close_pipes(int in[2], int out[2], int rep[2]) {
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0) close(in[i]);
        if (out[i] >= 0) close(out[i]);
        if (rep[i] >= 0) close(rep[i]);
        in[i] = out[i] = rep[i] = -1;
    }
}

pid_t subproc_spawn(const char *const *argv, pid_t parent, int *in_w, int *out_r, char *err) {
    int in[2] = {-1, -1}, out[2] = {-1, -1}, rep[2] = {-1, -1};
    *in_w = *out_r = -1;
    if (!argv || !argv[0]) {
        dv_seterr(err, "no program");
        return -1;
    }
    pid_t pid = pipes(in, out, rep, err) == 0 ? start(argv, in, out, rep, parent, err) : -1;
    if (pid > 0) {
        *in_w = in[1];
        *out_r = out[0];
        in[1] = out[0] = -1;
    }
    close_pipes(in, out, rep);
    return pid;
}

int subproc_run(const char *const *argv, const void *input, size_t len, double deadline_ms, struct subproc_result *res,
                char *err) {
    memset(res, 0, sizeof *res);
    struct run rn = {.input = input, .len = input ? len : 0, .deadline_ms = deadline_ms, .pidfd = -1};
    char why[ERR_LEN];
    rn.t0 = timeutil_now_ms();
    rn.pid = subproc_spawn(argv, 0, &rn.in_w, &rn.out_r, why);
    if (rn.pid < 0) {
        dv_seterr(err, "subproc: %s", why);
        return -1;
    }
#ifdef SYS_pidfd_open
    rn.pidfd = (int)syscall(SYS_pidfd_open, rn.pid, 0); /* close-on-exec; -1 (ENOSYS): ticked */
#endif
    fcntl(rn.in_w, F_SETFL, O_NONBLOCK);
    if (rn.len == 0) {
        close(rn.in_w);
        rn.in_w = -1;
    }
    if (pump(&rn, res) != 0) {
        end_group(&rn);
        run_close(&rn);
        dv_seterr(err, "subproc: out of memory for the output of %s", argv[0]);
        subproc_result_cleanup(res);
        return -1;
    }
    reap(&rn, res);
    run_close(&rn);
    return 0;
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
