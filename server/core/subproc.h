/* subproc.h -- the one way the server's parts run a program and take its
 * answer: a child process with the given argv, `input` on its stdin, its
 * stdout read whole into memory, under a deadline after which it is killed
 * with everything it started.
 *
 *   struct subproc_result res;
 *   const char *argv[] = {"/usr/local/cuda/bin/nvdisasm", "-c", path, NULL};
 *   if (subproc_run(argv, NULL, 0, 5000, &res, err) == 0 && res.how == SUBPROC_EXITED && res.status == 0)
 *       ... res.out, res.len ...
 *   subproc_result_cleanup(&res);
 *
 * The child gets no descriptor of the caller's but stdin, stdout and stderr
 * (stderr is the caller's, so what it says lands in the caller's log): a
 * worker's job pipes or a server's sockets never leak into it. Writing the
 * input and reading the output are interleaved, so a child that answers
 * before it has read everything cannot deadlock the two. The caller's
 * SIGPIPE must be ignored (the worker and the CLI ignore it) for a child
 * that exits without reading its input. Any thread may call it.
 *
 * The child leads a process group of its own, and the run ends with a
 * SIGKILL to that group: nothing the child started outlives the run. The
 * deadline bounds the child's whole life, whether or not it has closed its
 * stdout. A child that has ended while something it started still holds its
 * stdout is given SUBPROC_GRACE_MS more, then judged by its own exit, with
 * what it wrote kept.
 */
#ifndef DV_SUBPROC_H
#define DV_SUBPROC_H

#include <stddef.h>
#include <sys/types.h>

#define SUBPROC_MAX_OUTPUT (64u << 20) /* more output than this ends the child */
#define SUBPROC_GRACE_MS 100           /* the output's end awaited after the child's */

enum subproc_how {
    SUBPROC_EXITED,   /* status: its exit status                    */
    SUBPROC_SIGNALED, /* status: the signal that ended it           */
    SUBPROC_KILLED,   /* past the deadline (or its output too long) */
};

struct subproc_result {
    enum subproc_how how;
    int status;
    char *out; /* stdout, NUL-terminated (not counted in len); never NULL after success */
    size_t len;
    double ms; /* wall time from start to the end of the run (the child reaped) */
};

/* Runs argv[0] (a path, not searched for) with `argv`, `input` (`len`
 * bytes, may be NULL) on stdin, for at most `deadline_ms` (<= 0: none) of
 * its life, its group killed past it. Returns 0 with *res filled whatever
 * the child did, or -1 with `err` when it could not be started (no such
 * program: the reason says so). */
int subproc_run(const char *const *argv, const void *input, size_t len, double deadline_ms, struct subproc_result *res,
                char *err);

void subproc_result_cleanup(struct subproc_result *res);

/* The start subproc_run() makes, for a caller that keeps the child to talk
 * to it (server/jobs/instrserve.c's profiling server): argv[0] in a process
 * group of its own, its stdin the write end returned in *in_w and its
 * stdout the read end in *out_r (both close-on-exec), stderr the caller's,
 * no other descriptor of the caller's; where `parent` > 0, killed when that
 * process dies (PR_SET_PDEATHSIG; the child exits 127 at once where it has
 * died already). Returns the pid once the exec succeeded, or -1 with `err`
 * ("cannot run PROGRAM: REASON") and both ends -1. The caller ends it
 * (its group) and reaps it. */
pid_t subproc_spawn(const char *const *argv, pid_t parent, int *in_w, int *out_r, char *err);

/* "exit status 3", "signal 11 (Segmentation fault)", "killed after 2000 ms"
 * into `buf`. */
void subproc_describe(const struct subproc_result *res, double deadline_ms, char *buf, size_t size);

#endif /* DV_SUBPROC_H */
