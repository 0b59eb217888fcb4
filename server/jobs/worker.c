/* worker.c -- see worker.h.
 *
 * All child handling happens on the supervisor thread; other threads only
 * read the snapshot fields under `lock`. The child is started with fork +
 * exec (not posix_spawn) so it can set PR_SET_PDEATHSIG and close stray
 * descriptors between the two; the code between fork and exec uses only
 * async-signal-safe calls, as required in a threaded parent.
 */
#define _GNU_SOURCE
#include "kernels/base/timeutil.h"
#include "server/jobs/worker.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/jobs/instrproc.h"
#include "server/jobs/wire.h"
#include "kernels/model/stats/batchplan.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A batch is one session of the GPU worker (kernels/gpu/batch.h): never
 * more jobs than it takes readers, nor more rows than one table holds. */
_Static_assert(JOBQ_BATCH_MAX_JOBS <= BATCHPLAN_MAX_READERS, "a batch holds more jobs than the worker's readers");
_Static_assert(JOBQ_BATCH_MAX_ROWS <= DV_MAX_ROWS, "a batch's rows do not fit one table");

/* A message of groups (wire.h): batches of one key that were ready
 * together when their profiles are asked for, so one profile request
 * serves them all (jobs/instrproc.h instrproc_report_groups()). */
#define WORKER_MSG_GROUPS WIRE_MAX_GROUPS
#define WORKER_MSG_JOBS (WORKER_MSG_GROUPS * JOBQ_BATCH_MAX_JOBS)
_Static_assert(WORKER_MSG_GROUPS <= INSTRPROC_MAX_GROUPS, "a message holds more groups than the profiler takes");

struct worker {
    char **argv;
    unsigned hello_timeout_ms, backoff_max_ms;
    unsigned batch_jobs; /* the most jobs one session measures */
    struct jobq *q;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stopping;
    int hello_done; /* first start attempt finished (ready or failed) */
    /* child, owned by the supervisor thread */
    pid_t pid;
    int to_child, from_child;
    unsigned failures; /* consecutive, drives the backoff */
    /* snapshot, under lock */
    enum worker_state state;
    int gpu_present;
    unsigned long long restarts, jobs;
    double busy_s, gpu_time_s;
    char *device_json;
    char reason[ERR_LEN];
    worker_testimony_fn testimony_fn; /* under lock */
    void *testimony_ctx;
};

const char *worker_state_name(enum worker_state s) {
    switch (s) {
    case WORKER_STARTING: return "starting";
    case WORKER_READY: return "ready";
    case WORKER_DOWN: return "down";
    case WORKER_STOPPED: return "stopped";
    }
    return "unknown";
}

static void set_state(struct worker *w, enum worker_state st, const char *reason) {
    pthread_mutex_lock(&w->lock);
    w->state = st;
    if (reason) snprintf(w->reason, sizeof w->reason, "%s", reason);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

struct worker *worker_create(const struct worker_config *cfg, struct jobq *q, char *err) {
    if (!cfg->argv || !cfg->argv[0]) {
        dv_seterr(err, "worker: no command");
        return NULL;
    }
    struct worker *w = calloc(1, sizeof *w);
    if (!w) goto oom;
    size_t n = 0;
    while (cfg->argv[n]) n++;
    w->argv = calloc(n + 1, sizeof *w->argv);
    if (!w->argv) goto oom;
    for (size_t i = 0; i < n; i++)
        if (!(w->argv[i] = strdup(cfg->argv[i]))) goto oom;
    w->hello_timeout_ms = cfg->hello_timeout_ms ? cfg->hello_timeout_ms : 30000;
    w->batch_jobs = cfg->batch_jobs == 0 || cfg->batch_jobs > JOBQ_BATCH_MAX_JOBS ? JOBQ_BATCH_MAX_JOBS : cfg->batch_jobs;
    w->backoff_max_ms = cfg->backoff_max_ms ? cfg->backoff_max_ms : 5000;
    w->q = q;
    w->to_child = w->from_child = -1;
    w->state = WORKER_STARTING;
    snprintf(w->reason, sizeof w->reason, "worker: starting");
    if (timeutil_cond_init(&w->cond) != 0) goto oom; /* timed waits use timeutil_deadline()'s clock */
    pthread_mutex_init(&w->lock, NULL);
    return w;
oom:
    if (w && w->argv) {
        for (size_t i = 0; w->argv[i]; i++) free(w->argv[i]);
        free(w->argv);
    }
    free(w);
    dv_seterr(err, "worker: out of memory");
    return NULL;
}

/* Describes a wait status: "exited with status 3", "killed by signal 6 (Aborted)". */
static void describe_status(int status, char *buf, size_t len) {
    if (WIFEXITED(status))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "stopped (status 0x%x)", status);
}

/* Waits up to `grace_ms` for the child to exit, then SIGKILLs it; reaps it,
 * closes the pipes and describes how it ended into `how`. */
static void child_reap(struct worker *w, int grace_ms, char *how, size_t len) {
    if (how && len) how[0] = '\0';
    if (w->to_child >= 0) close(w->to_child);
    if (w->from_child >= 0) close(w->from_child);
    w->to_child = w->from_child = -1;
    if (w->pid <= 0) return;
    int status = 0;
    pid_t r = 0;
    for (int waited = 0; waited < grace_ms; waited += 10) {
        r = waitpid(w->pid, &status, WNOHANG);
        if (r != 0) break;
        timeutil_sleep_ms(10);
    }
    if (r == 0) {
        kill(w->pid, SIGKILL);
        while ((r = waitpid(w->pid, &status, 0)) < 0 && errno == EINTR) {}
    }
    if (r == w->pid && how) describe_status(status, how, len);
    LOG(LOG_INFO, "worker: process %ld %s", (long)w->pid, how && how[0] ? how : "reaped");
    pthread_mutex_lock(&w->lock);
    w->pid = 0;
    free(w->device_json);
    w->device_json = NULL;
    pthread_mutex_unlock(&w->lock);
}

/* Forks and execs the worker command with the job pipe on fd 3 and the
 * reply pipe on fd 4. Returns 0 or -1 with `err`. */
static int child_spawn(struct worker *w, char *err) {
    int down[2] = {-1, -1}, up[2] = {-1, -1};
    if (pipe2(down, O_CLOEXEC) < 0 || pipe2(up, O_CLOEXEC) < 0) {
        dv_seterr(err, "worker: pipe: %s", strerror(errno));
        goto fail;
    }
    pid_t parent = getpid();
    /* Computed here: sysconf() is not async-signal-safe. */
    long maxfd = sysconf(_SC_OPEN_MAX);
    if (maxfd < 0 || maxfd > 1L << 20) maxfd = 1L << 20;
    pid_t pid = fork();
    if (pid < 0) {
        dv_seterr(err, "worker: fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        /* Child: async-signal-safe calls only until exec. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        int in = fcntl(down[0], F_DUPFD_CLOEXEC, 10);
        int out = fcntl(up[1], F_DUPFD_CLOEXEC, 10);
        if (in < 0 || out < 0 || dup2(in, WIRE_FD_IN) < 0 || dup2(out, WIRE_FD_OUT) < 0) _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
        dup2(STDERR_FILENO, STDOUT_FILENO); /* stray prints go to the log */
        /* Everything above the pipes goes, whether or not its opener asked
         * for O_CLOEXEC. close_range is missing before Linux 5.9 and may be
         * refused by a seccomp filter: then one close() per descriptor. */
        long closed = -1;
#ifdef SYS_close_range
        closed = syscall(SYS_close_range, 5u, ~0u, 0u);
#endif
        if (closed != 0)
            for (long fd = 5; fd < maxfd; fd++) close((int)fd);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        execv(w->argv[0], w->argv);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    pthread_mutex_lock(&w->lock);
    w->pid = pid;
    pthread_mutex_unlock(&w->lock);
    w->to_child = down[1];
    w->from_child = up[0];
    LOG(LOG_INFO, "worker: started %s as process %ld", w->argv[0], (long)pid);
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (down[i] >= 0) close(down[i]);
        if (up[i] >= 0) close(up[i]);
    }
    return -1;
}

/* The hello's "warm" (wire.h): the warm-up's run of one kind of job,
 * which seeds the queue's estimate for that kind while it has no finished
 * run (jobq_seed()), before the worker is said to be ready. A hello without
 * one (an older worker, a stand-in) seeds nothing; one that is not
 * {"kind": text, "run_ms": a positive number} is logged and seeds nothing. */
static void seed_from_hello(struct worker *w, const json_t *warm) {
    if (!warm) return;
    const char *kind = json_string_value(json_object_get(warm, "kind"));
    const json_t *ms = json_object_get(warm, "run_ms");
    const double run_ms = json_is_number(ms) ? json_number_value(ms) : -1;
    if (!kind || !kind[0] || !(run_ms > 0 && run_ms <= 3600e3)) {
        LOG(LOG_WARNING,
            "worker: its hello's \"warm\" is not {\"kind\": text, \"run_ms\": a number of ms in "
            "(0, 3600000]}; the queue's estimate is not seeded");
        return;
    }
    if (jobq_seed(w->q, kind, run_ms / 1e3))
        LOG(LOG_INFO, "worker: a %s job is expected to run %.1f ms (the warm-up's) until one has", kind, run_ms);
}

/* Starts a child and reads its hello. Returns 0 with the snapshot updated,
 * or -1 with `err` (the child is reaped). */
static int child_start(struct worker *w, char *err) {
    if (child_spawn(w, err) < 0) return -1;
    char *msg = NULL;
    size_t len = 0;
    char how[128];
    enum wire_status rc = wire_read(w->from_child, &msg, &len, (int)w->hello_timeout_ms, err);
    if (rc != WIRE_OK) {
        if (rc == WIRE_TIMEOUT) {
            child_reap(w, 0, how, sizeof how);
            dv_seterr(err, "worker: no hello within %u ms; killed", w->hello_timeout_ms);
        } else {
            child_reap(w, 2000, how, sizeof how);
            if (rc == WIRE_EOF || !how[0]) dv_seterr(err, "worker: %s before its hello", how[0] ? how : "closed its pipe");
            else dv_seterr(err, "worker: %s before its hello", how);
        }
        return -1;
    }
    json_error_t je;
    json_t *root = jsonout_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
    free(msg);
    json_t *dev = root ? json_object_get(root, "device") : NULL;
    if (!json_is_object(dev)) {
        json_decref(root);
        child_reap(w, 0, how, sizeof how);
        dv_seterr(err, "worker: its hello is not {\"device\": {...}}");
        return -1;
    }
    int present = json_is_true(json_object_get(dev, "present"));
    const char *why = json_string_value(json_object_get(dev, "reason"));
    seed_from_hello(w, json_object_get(root, "warm"));
    char *text = jsonout_dumps(dev, JSON_COMPACT);
    pthread_mutex_lock(&w->lock);
    free(w->device_json);
    w->device_json = text;
    w->gpu_present = present;
    w->state = WORKER_READY;
    if (present) w->reason[0] = '\0';
    else snprintf(w->reason, sizeof w->reason, "no GPU: %s", why ? why : "the worker found no CUDA device");
    w->hello_done = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    LOG(present ? LOG_INFO : LOG_WARNING, "worker: ready, %s%s", present ? "device " : "no GPU: ",
        present ? json_string_value(json_object_get(dev, "name")) ? json_string_value(json_object_get(dev, "name")) : "?"
                : (why ? why : "unknown reason"));
    json_decref(root);
    return 0;
}

/* Sleeps the backoff for the current failure streak; returns early (1) when
 * stopping. */
static int backoff_sleep(struct worker *w) {
    unsigned ms = 0;
    if (w->failures > 1) {
        ms = 100u << (w->failures - 2 > 6 ? 6 : w->failures - 2);
        if (ms > w->backoff_max_ms) ms = w->backoff_max_ms;
    }
    struct timespec until = timeutil_deadline((double)ms);
    pthread_mutex_lock(&w->lock);
    while (!w->stopping && pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT) {}
    int stop = w->stopping;
    pthread_mutex_unlock(&w->lock);
    return stop;
}

/* Marks the child gone after a failure so the loop restarts it. */
static void child_lost(struct worker *w, const char *reason) {
    w->failures++;
    pthread_mutex_lock(&w->lock);
    w->restarts++;
    w->state = WORKER_DOWN;
    snprintf(w->reason, sizeof w->reason, "%s", reason);
    pthread_mutex_unlock(&w->lock);
}

static const char *code_kind(int code) {
    switch (code) {
    case DV_ENOGPU: return "no_gpu";
    case DV_ESTICKY: return "sticky";
    case DV_EGATE: return "gate";
    default: return "error";
    }
}

/* The request of job `j` as JSON, or NULL with `err`. */
static json_t *job_request(struct job *j, char *err) {
    json_error_t je;
    json_t *req = jsonout_loads(jobq_job_request(j), JSON_REJECT_DUPLICATES, &je);
    if (!req) {
        if (jsonout_oom(&je)) dv_seterr(err, "worker: out of memory");
        else dv_seterr(err, "worker: the job's request is not JSON: %s", je.text);
    }
    return req;
}

/* The message of jobs[0..*n) (wire.h): one job's, a batch's, or with
 * *ng > 1 groups (sizes[g] jobs each, in order) a message of groups. A
 * job whose request cannot be read fails here and leaves the list (and a
 * group left empty, the groups); *n and *ng are what is left (*n 0:
 * nothing to send, NULL returned). NULL with `err` when the message cannot
 * be built (the jobs are the caller's to fail). */
static char *jobs_message(struct worker *w, struct job **jobs, unsigned *n, unsigned *sizes, unsigned *ng,
                          char *err) {
    json_t *reqs[WORKER_MSG_JOBS];
    const char *ids[WORKER_MSG_JOBS];
    unsigned m = 0, g = 0;
    for (unsigned k = 0, i = 0; k < *ng; k++) {
        const unsigned before = m;
        for (unsigned end = i + sizes[k]; i < end; i++) {
            char why[ERR_LEN];
            if (!(reqs[m] = job_request(jobs[i], why))) {
                jobq_finish(w->q, jobs[i], 0, NULL, 0, DV_ERR, "error", why);
                continue;
            }
            ids[m] = jobq_job_id(jobs[i]);
            jobs[m++] = jobs[i];
        }
        if (m > before) sizes[g++] = m - before;
    }
    *n = m;
    *ng = g;
    if (m == 0) return NULL;
    char *msg = g > 1 ? wire_groups(ids, reqs, sizes, g) : m == 1 ? wire_job(ids[0], reqs[0]) : wire_batch(ids, reqs, m);
    if (!msg) dv_seterr(err, "worker: out of memory");
    return msg;
}

/* Finishes `j` from the child's reply `root` (its id is j's). Returns NULL
 * when the child goes on, else why it is restarted: it ends after this
 * reply (a sticky CUDA error, or "exiting": one inside a counter pass that
 * let the job finish). */
static const char *finish_from(struct worker *w, struct job *j, json_t *root) {
    char reason[ERR_LEN + 160];
    json_t *okv = json_object_get(root, "ok");
    json_t *doc = json_object_get(root, "document");
    char *doctext = json_is_object(doc) ? jsonout_dumps(doc, JSON_COMPACT) : NULL;
    double gpu_ms = json_number_value(json_object_get(root, "gpu_time_ms"));
    json_t *tv = json_object_get(root, "testimony_ms");
    const char *ends = NULL;
    pthread_mutex_lock(&w->lock);
    w->gpu_time_s += gpu_ms / 1000.0;
    if (w->testimony_fn && json_is_number(tv) && json_number_value(tv) >= 0)
        w->testimony_fn(w->testimony_ctx, json_number_value(tv) / 1000.0);
    pthread_mutex_unlock(&w->lock);
    if (json_is_true(okv) && doctext) {
        w->failures = 0;
        jobq_finish(w->q, j, 1, doctext, gpu_ms, 0, NULL, NULL);
        if (json_is_true(json_object_get(root, "exiting"))) /* it ends after this job: start the next now */
            ends = "worker: restarting after a sticky CUDA error in a counter pass";
    } else if (json_is_true(okv)) {
        jobq_finish(w->q, j, 0, NULL, gpu_ms, DV_ERR, "error", "worker replied ok without a document");
    } else {
        int code = (int)json_integer_value(json_object_get(root, "code"));
        const char *e = json_string_value(json_object_get(root, "error"));
        if (code == 0) code = DV_ERR;
        if (code == DV_ESTICKY) { /* the child exits after a sticky error */
            snprintf(reason, sizeof reason, "%s; the worker was restarted", e ? e : "sticky CUDA error");
            jobq_finish(w->q, j, 0, doctext, gpu_ms, code, "sticky", reason);
            ends = "worker: restarting after a sticky CUDA error";
        } else {
            w->failures = 0;
            jobq_finish(w->q, j, 0, doctext, gpu_ms, code, code_kind(code), e ? e : "worker failed");
        }
    }
    free(doctext);
    return ends;
}

/* Ends the child after a failure and fails jobs[i] of the `n` that
 * `done` does not mark with `kind` and `reason`. */
static void fail_rest(struct worker *w, struct job **jobs, const int *done, unsigned n, int grace_ms,
                      const char *lost, const char *kind, const char *reason) {
    char how[128] = "";
    child_reap(w, grace_ms, how, sizeof how);
    child_lost(w, lost);
    for (unsigned i = 0; i < n; i++)
        if (!done[i]) jobq_finish(w->q, jobs[i], 0, NULL, 0, DV_ERR, kind, reason);
}

/* Reads the child's replies to jobs[0..n) (one each, in any order) until
 * `deadline_ms` has passed since `t0` (ms), finishing each job as its reply
 * comes. Returns NULL, or why the child is restarted after the last reply;
 * a child that fails (deadline, crash, a reply to no job it holds) is
 * ended here and the jobs without a reply fail with what it did. */
static const char *read_replies(struct worker *w, struct job **jobs, unsigned n, double t0, unsigned deadline_ms,
                                int *failed) {
    int done[WORKER_MSG_JOBS] = {0};
    char err[ERR_LEN] = "", how[128] = "", reason[ERR_LEN + 160];
    const char *ends = NULL;
    *failed = 0;
    for (unsigned left = n; left > 0; left--) {
        char *msg = NULL;
        size_t len = 0;
        const double wait = deadline_ms - (timeutil_now_ms() - t0);
        enum wire_status rc = wire_read(w->from_child, &msg, &len, wait > 0 ? (int)wait : 0, err);
        if (rc == WIRE_TIMEOUT) {
            snprintf(reason, sizeof reason, "deadline exceeded: no result after %g s; the worker was restarted",
                     deadline_ms / 1000.0);
            fail_rest(w, jobs, done, n, 0, "worker: restarting after a job passed its deadline", "deadline", reason);
            return *failed = 1, NULL;
        }
        if (rc != WIRE_OK) {
            child_reap(w, 2000, how, sizeof how);
            snprintf(reason, sizeof reason, "worker crashed: %s; the worker was restarted",
                     how[0] ? how : (err[0] ? err : "lost"));
            fail_rest(w, jobs, done, n, 0, "worker: restarting after a crash", "crash", reason);
            return *failed = 1, NULL;
        }
        json_error_t je;
        json_t *root = jsonout_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
        free(msg);
        const char *rid = json_string_value(json_object_get(root, "id"));
        unsigned k = 0;
        while (k < n && (done[k] || !rid || strcmp(rid, jobq_job_id(jobs[k])) != 0)) k++;
        if (k == n || !json_is_boolean(json_object_get(root, "ok"))) {
            json_decref(root);
            fail_rest(w, jobs, done, n, 0, "worker: restarting after a protocol error", "crash",
                      "worker protocol error: the reply does not answer this job; the worker was restarted");
            return *failed = 1, NULL;
        }
        const char *e = finish_from(w, jobs[k], root);
        if (e) ends = e;
        done[k] = 1;
        json_decref(root);
    }
    return ends;
}

/* Sends jobs[0..n) (one job, a batch, or `ng` groups of sizes[g] jobs)
 * to the child and finishes each from its reply. A message's deadline is
 * its members' together: it never has less time than its jobs would have
 * had one after another. */
static void run_jobs(struct worker *w, struct job **jobs, unsigned n, unsigned *sizes, unsigned ng) {
    char err[ERR_LEN] = "";
    char *out = jobs_message(w, jobs, &n, sizes, &ng, err);
    if (n == 0) return;
    if (!out) { /* out of memory: the jobs fail, the child goes on */
        for (unsigned i = 0; i < n; i++) jobq_finish(w->q, jobs[i], 0, NULL, 0, DV_ERR, "error", err);
        return;
    }
    unsigned deadline = 0;
    for (unsigned i = 0; i < n; i++) deadline += jobq_job_deadline_ms(jobs[i]);
    const double t0 = timeutil_now_ms();
    const int sent = wire_send(w->to_child, out, err);
    pthread_mutex_lock(&w->lock);
    w->jobs += n;
    pthread_mutex_unlock(&w->lock);
    if (sent != 0) {
        const int done[WORKER_MSG_JOBS] = {0};
        char reason[ERR_LEN + 160];
        snprintf(reason, sizeof reason, "worker crashed: %s; the worker was restarted", err[0] ? err : "lost");
        fail_rest(w, jobs, done, n, 2000, "worker: restarting after a crash", "crash", reason);
        return;
    }
    int failed = 0;
    const char *ends = read_replies(w, jobs, n, t0, deadline, &failed);
    pthread_mutex_lock(&w->lock);
    w->busy_s += (timeutil_now_ms() - t0) / 1e3;
    pthread_mutex_unlock(&w->lock);
    if (ends && !failed) {
        char how[128];
        child_reap(w, 2000, how, sizeof how);
        child_lost(w, ends);
    }
}

static int is_stopping(struct worker *w) {
    pthread_mutex_lock(&w->lock);
    int s = w->stopping;
    pthread_mutex_unlock(&w->lock);
    return s;
}

/* 1 when the request of running job `j` asks for instruction profiles. */
static int wants_instructions(struct job *j) {
    char err[ERR_LEN];
    json_t *req = job_request(j, err);
    const int yes = json_is_true(json_object_get(req, "instructions"));
    json_decref(req);
    return yes;
}

/* After a batch jobs[0..sizes[0]) that asks for profiles: the further
 * batches of its key ready now (jobq_pop_batch_like(): nobody waits for
 * more, the fair order kept), each a group of the message. Returns the
 * groups (1: that batch alone); *n the jobs of them all. */
static unsigned more_groups(struct worker *w, struct job **jobs, unsigned *n, unsigned *sizes) {
    unsigned ng = 1;
    if (!wants_instructions(jobs[0])) return ng;
    while (ng < WORKER_MSG_GROUPS && *n < WORKER_MSG_JOBS) {
        unsigned m = 0, room = WORKER_MSG_JOBS - *n;
        if (jobq_pop_batch_like(w->q, jobs[0], room < w->batch_jobs ? room : w->batch_jobs, JOBQ_BATCH_MAX_ROWS,
                                jobs + *n, &m) != 1)
            break;
        sizes[ng++] = m;
        *n += m;
    }
    return ng;
}

static void *supervise(void *arg) {
    struct worker *w = arg;
    char err[ERR_LEN];
    while (!is_stopping(w)) {
        if (w->pid <= 0) {
            if (w->failures && backoff_sleep(w)) break;
            set_state(w, WORKER_STARTING, NULL);
            if (child_start(w, err) < 0) {
                LOG(LOG_ERR, "%s", err);
                w->failures++;
                pthread_mutex_lock(&w->lock);
                w->state = WORKER_DOWN;
                snprintf(w->reason, sizeof w->reason, "%s", err);
                w->hello_done = 1;
                pthread_cond_broadcast(&w->cond);
                pthread_mutex_unlock(&w->lock);
                if (w->failures >= 3) {
                    /* It keeps failing: do not let queued jobs wait forever. */
                    struct job *j = NULL;
                    char why[ERR_LEN + 40];
                    snprintf(why, sizeof why, "the GPU worker cannot start: %s", err);
                    while (jobq_pop(w->q, 0, &j) == 1) jobq_finish(w->q, j, 0, NULL, 0, DV_ERR, "crash", why);
                }
                continue;
            }
        }
        struct job *jobs[WORKER_MSG_JOBS];
        unsigned n = 0, sizes[WORKER_MSG_GROUPS];
        int rc = jobq_pop_batch(w->q, 500, w->batch_jobs, JOBQ_BATCH_MAX_ROWS, jobs, &n);
        if (rc < 0) break;
        if (rc == 0) {
            /* Idle: notice a child that died on its own. */
            int status;
            if (waitpid(w->pid, &status, WNOHANG) == w->pid) {
                char how[128];
                describe_status(status, how, sizeof how);
                LOG(LOG_ERR, "worker: process %ld %s while idle", (long)w->pid, how);
                pthread_mutex_lock(&w->lock);
                w->pid = 0;
                pthread_mutex_unlock(&w->lock);
                child_reap(w, 0, NULL, 0);
                child_lost(w, "worker: restarting after it died while idle");
            }
            continue;
        }
        pthread_mutex_lock(&w->lock);
        int present = w->gpu_present;
        char why[ERR_LEN];
        snprintf(why, sizeof why, "%s", w->reason);
        pthread_mutex_unlock(&w->lock);
        if (!present) {
            for (unsigned i = 0; i < n; i++) jobq_finish(w->q, jobs[i], 0, NULL, 0, DV_ENOGPU, "no_gpu", why);
            continue;
        }
        sizes[0] = n;
        const unsigned ng = more_groups(w, jobs, &n, sizes);
        run_jobs(w, jobs, n, sizes, ng);
    }
    child_reap(w, 2000, NULL, 0);
    set_state(w, WORKER_STOPPED, "worker: stopped");
    return NULL;
}

int worker_start(struct worker *w, char *err) {
    int rc = pthread_create(&w->thread, NULL, supervise, w);
    if (rc != 0) {
        dv_seterr(err, "worker: pthread_create: %s", strerror(rc));
        return -1;
    }
    w->started = 1;
    return 0;
}

int worker_wait_ready(struct worker *w, int timeout_ms) {
    struct timespec until = timeutil_deadline((double)timeout_ms);
    pthread_mutex_lock(&w->lock);
    while (!w->hello_done && pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT) {}
    int ok = w->state == WORKER_READY;
    pthread_mutex_unlock(&w->lock);
    return ok ? 0 : -1;
}

void worker_stop(struct worker *w) {
    if (!w || !w->started) return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    w->started = 0;
}

void worker_free(struct worker *w) {
    if (!w) return;
    worker_stop(w);
    for (size_t i = 0; w->argv[i]; i++) free(w->argv[i]);
    free(w->argv);
    free(w->device_json);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void worker_get_snapshot(struct worker *w, struct worker_snapshot *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&w->lock);
    s->state = w->state;
    s->gpu_present = w->gpu_present && w->state == WORKER_READY;
    s->gpu_seen = w->gpu_present;
    s->pid = w->pid;
    s->restarts = w->restarts;
    s->jobs = w->jobs;
    s->busy_s = w->busy_s;
    s->gpu_time_s = w->gpu_time_s;
    s->device_json = w->device_json ? strdup(w->device_json) : NULL;
    snprintf(s->reason, sizeof s->reason, "%s", w->reason);
    pthread_mutex_unlock(&w->lock);
}

void worker_set_testimony_observer(struct worker *w, worker_testimony_fn fn, void *ctx) {
    pthread_mutex_lock(&w->lock);
    w->testimony_fn = fn;
    w->testimony_ctx = ctx;
    pthread_mutex_unlock(&w->lock);
}
