/* instrserve.c -- the long-lived instruction profiler child (instrserve.h).
 *
 * Started as server/core/subproc.h starts every child (subproc_spawn: only
 * async-signal-safe calls between fork and exec, the worker having CUDA's
 * threads; the exec's outcome through a close-on-exec pipe), with death
 * with the worker. The child leads a process group of its own, and the
 * group is what is killed; the child is reaped right after, so its id, the
 * group's, is never a stranger's when killed.
 */
#define _GNU_SOURCE
#include "server/jobs/instrserve.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "kernels/base/timeutil.h"
#include "server/core/subproc.h"
#include "server/jobs/wire.h"

#define INSTRSERVE_MAX_ARGS 32

struct instrserve {
    char *argv[INSTRSERVE_MAX_ARGS + 1];
    pid_t pid; /* 0: none running */
    int in_w, out_r;
    unsigned starts;
};

struct instrserve *instrserve_create(const char *const *argv, char *err) {
    struct instrserve *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    s->in_w = s->out_r = -1;
    for (unsigned i = 0; argv[i]; i++) {
        if (i == INSTRSERVE_MAX_ARGS) {
            dv_seterr(err, "instructions: more than %d arguments for the profiling server", INSTRSERVE_MAX_ARGS);
            instrserve_free(s);
            return NULL;
        }
        if (!(s->argv[i] = strdup(argv[i]))) goto oom;
    }
    return s;
oom:
    dv_seterr(err, "instructions: out of memory");
    instrserve_free(s);
    return NULL;
}

void instrserve_stop(struct instrserve *s) {
    if (!s || !s->pid) return;
    if (s->in_w >= 0) close(s->in_w);
    if (s->out_r >= 0) close(s->out_r);
    s->in_w = s->out_r = -1;
    kill(-s->pid, SIGKILL);
    while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    s->pid = 0;
}

void instrserve_free(struct instrserve *s) {
    if (!s) return;
    instrserve_stop(s);
    for (unsigned i = 0; s->argv[i]; i++) free(s->argv[i]);
    free(s);
}

pid_t instrserve_pid(const struct instrserve *s) { return s ? s->pid : 0; }
unsigned instrserve_starts(const struct instrserve *s) { return s ? s->starts : 0; }

/* Starts the child (server/core/subproc.h: its own group, death with this
 * process, the frames on its stdin and stdout). Returns 0, or -1 with `err`. */
static int spawn(struct instrserve *s, char *err) {
    char why[ERR_LEN];
    const pid_t pid = subproc_spawn((const char *const *)s->argv, getpid(), &s->in_w, &s->out_r, why);
    if (pid < 0) {
        dv_seterr(err, "instructions: the profiling server: %s", why);
        return -1;
    }
    s->pid = pid;
    s->starts++;
    return 0;
}

/* How the child, which has closed its stdout or broken a frame, ended:
 * killed (the group, in case it lingers) and reaped, said into `what`. */
static void describe_end(struct instrserve *s, char *what, size_t size) {
    int status = 0;
    kill(-s->pid, SIGKILL);
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
    }
    s->pid = 0;
    if (WIFEXITED(status)) snprintf(what, size, "ended with exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(what, size, "ended with signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else snprintf(what, size, "ended");
    close(s->in_w);
    close(s->out_r);
    s->in_w = s->out_r = -1;
}

/* 1 when the child has ended by itself (not reaped: WNOWAIT). */
static int child_gone(const struct instrserve *s) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == s->pid;
}

/* The next frame within `deadline` (an absolute time, ms) as a JSON
 * object, or NULL with a->end / a->what set (the child gone). */
static json_t *next_frame(struct instrserve *s, double deadline, struct instrserve_answer *a, char **text) {
    char err[ERR_LEN] = "", *msg = NULL;
    size_t len = 0;
    const double left = deadline - timeutil_now_ms();
    const enum wire_status ws = left > 0 ? wire_read(s->out_r, &msg, &len, (int)left + 1, err) : WIRE_TIMEOUT;
    json_t *o = NULL;
    if (ws == WIRE_OK && (o = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL)) != NULL && json_is_object(o)) {
        *text = msg;
        return o;
    }
    json_decref(o);
    if (ws == WIRE_TIMEOUT) {
        a->end = INSTRSERVE_KILLED;
        instrserve_stop(s);
    } else if (ws == WIRE_EOF || (ws == WIRE_ERROR && child_gone(s))) {
        a->end = INSTRSERVE_ENDED;
        describe_end(s, a->what, sizeof a->what);
    } else {
        a->end = INSTRSERVE_GARBAGE;
        snprintf(a->what, sizeof a->what, "answered what is not a frame of JSON (%.120s): killed",
                 ws == WIRE_OK ? msg : err);
        instrserve_stop(s);
    }
    free(msg);
    return NULL;
}

int instrserve_start(struct instrserve *s, double deadline_ms, char *err) {
    if (s->pid) return 0;
    if (spawn(s, err) != 0) return -1;
    struct instrserve_answer a = {0};
    char *text = NULL;
    json_t *o = next_frame(s, timeutil_now_ms() + deadline_ms, &a, &text);
    const int ready = json_is_true(json_object_get(o, "ready"));
    json_decref(o);
    free(text);
    if (ready) return 0;
    if (!o) dv_seterr(err, "instructions: the profiling server %s before it was ready",
                      a.end == INSTRSERVE_KILLED ? "was killed, not ready in time," : a.what);
    else {
        dv_seterr(err, "instructions: the profiling server said it is not ready (its log says why)");
        instrserve_stop(s);
    }
    return -1;
}

int instrserve_ask(struct instrserve *s, const char *frame, size_t len, double deadline_ms,
                   void (*on_line)(const char *line, void *ctx), void *ctx, struct instrserve_answer *a, char *err) {
    memset(a, 0, sizeof *a);
    if (!s->pid) {
        dv_seterr(err, "instructions: no profiling server runs");
        return -1;
    }
    const double t0 = timeutil_now_ms(), deadline = t0 + deadline_ms;
    char werr[ERR_LEN];
    if (wire_write(s->in_w, frame, len, werr) != 0) { /* it is gone: how it ended says why */
        a->end = INSTRSERVE_ENDED;
        describe_end(s, a->what, sizeof a->what);
        a->ms = timeutil_now_ms() - t0;
        return 0;
    }
    for (;;) {
        char *text = NULL;
        json_t *o = next_frame(s, deadline, a, &text);
        if (!o) break;
        const int done = json_is_true(json_object_get(o, "done"));
        const int ending = done && json_is_true(json_object_get(o, "ending"));
        json_decref(o);
        on_line(text, ctx);
        free(text);
        if (done) {
            a->end = INSTRSERVE_DONE;
            /* It ends after this answer: gone now, so the next request
             * starts a fresh one instead of finding it dead. */
            if (ending) instrserve_stop(s);
            a->ending = ending;
            break;
        }
    }
    if (a->end == INSTRSERVE_KILLED) snprintf(a->what, sizeof a->what, "killed after %.0f ms", deadline_ms);
    a->ms = timeutil_now_ms() - t0;
    return 0;
}
