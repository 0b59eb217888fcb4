/* instrserve.h -- the worker's one long-lived instruction profiler: a
 * `divergence-gpu instructions --serve` child (cmd/instr_cmd.h) that sets
 * up CUDA and CUPTI once and then profiles request after request, so a
 * batch's profiles do not pay a process's start each.
 *
 *   struct instrserve *s = instrserve_create(argv, err);
 *   if (instrserve_start(s, 15000, err) == 0)          (started when not running)
 *       instrserve_ask(s, frame, len, deadline_ms, on_line, ctx, &answer, err);
 *   instrserve_free(s);                                (the child ends with it)
 *
 * The wire is jobs/wire.h's framing both ways on the child's stdin and
 * stdout: the worker sends {"rows": "T:R,...", "request": {...}}; the child
 * answers with one frame per row (the lines `--rows` prints) and a last
 * {"done": true, ...}. At its start the child sends {"ready": true|false}.
 * A "done" with "ending": true (its passes failed as a whole: the child
 * ends after it) stops the child there, so the next request starts a
 * fresh one rather than finding it gone.
 *
 * What keeps the old one-process-per-batch design's robustness:
 *   - a request past its deadline kills the child (its process group); a
 *     child that ends, or answers what is not a frame of a JSON object,
 *     is killed and reaped too: the request ends there, and the rows it had
 *     not answered are the caller's to ask again (jobs/instrproc.c); the
 *     next request starts a fresh child;
 *   - the child dies with the worker (PR_SET_PDEATHSIG, set in the child
 *     before its exec) and ends at the end of its stdin (instrserve_free());
 *   - it gets no descriptor of the worker's but its stdin, stdout and stderr;
 *   - it runs only while the worker waits in instrserve_start() or
 *     instrserve_ask(): the worker is single-threaded, so nothing the child
 *     does on the GPU overlaps the worker's timed kernels.
 * One thread uses a struct instrserve; the caller ignores SIGPIPE.
 */
#ifndef DV_INSTRSERVE_H
#define DV_INSTRSERVE_H

#include <stddef.h>
#include <sys/types.h>

enum instrserve_end {
    INSTRSERVE_DONE,    /* the "done" frame came                          */
    INSTRSERVE_ENDED,   /* the child ended before it (what: how)          */
    INSTRSERVE_KILLED,  /* past the deadline: killed                      */
    INSTRSERVE_GARBAGE, /* it wrote what is not a frame of JSON: killed   */
};

struct instrserve_answer {
    enum instrserve_end end;
    int ending;     /* DONE, and the child said it ends after it: stopped */
    char what[200]; /* how a request that did not end in DONE ended */
    double ms;      /* the request's wall time                        */
};

struct instrserve;

/* A profiler that runs `argv` (argv[0] a path; NULL-terminated; copied)
 * when started. NULL with `err` when out of memory. */
struct instrserve *instrserve_create(const char *const *argv, char *err);

/* Ends the child (its stdin closed, its group killed, reaped) and frees
 * `s`; accepts NULL. */
void instrserve_free(struct instrserve *s);

/* The child started and ready, unless it runs already. Waits at most
 * `deadline_ms` for its "ready". Returns 0, or -1 with `err` (it could not
 * be started, said it was not ready, ended or hung: it is gone). */
int instrserve_start(struct instrserve *s, double deadline_ms, char *err);

/* One request, `frame` (`len` bytes of JSON), to the running child: each
 * answer frame, the last too, goes to on_line(line, ctx) (NUL-terminated,
 * valid during the call), until the "done" frame, the child's end, garbage
 * or `deadline_ms`; *a says which. Returns 0 (even when the child did not
 * answer whole: *a), or -1 with `err` when no child runs. */
int instrserve_ask(struct instrserve *s, const char *frame, size_t len, double deadline_ms,
                   void (*on_line)(const char *line, void *ctx), void *ctx, struct instrserve_answer *a, char *err);

/* Ends the child, if any (as instrserve_free() does, `s` kept). */
void instrserve_stop(struct instrserve *s);

/* The running child's pid, or 0; the children started so far. */
pid_t instrserve_pid(const struct instrserve *s);
unsigned instrserve_starts(const struct instrserve *s);

#endif /* DV_INSTRSERVE_H */
