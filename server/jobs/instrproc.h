/* instrproc.h -- the instruction profiles of a measured report: one
 * short-lived `divergence-gpu instructions --rows ...` process for the rows
 * whose profile is not in the cache (cmd/instr_cmd.h), run after the job's
 * timed samples and its testimony, with a deadline after which it is
 * killed; and the cache, for the life of the process that holds it (the GPU
 * worker, or one `divergence-gpu measure`).
 *
 * Why a process of its own: CUPTI's SASS patching and PC sampling then
 * never run in the process that times kernels; its traps (SetConfig only
 * once per process, patched kernels left behind) end with the process; and
 * a crash or a hang costs profiles, not the job: a row without one has
 * `instructions` null with the reason and the job goes on. Why one for the
 * job's rows: the process's start, CUDA context and CUPTI set-up are most of
 * a profile's cost, and its rows share them. A row the process refused
 * while it gave others their profiles (no record beside the others) is
 * asked again alone; where the process ended before a row's answer, that
 * row is asked alone and the rows after it together again; three processes
 * in a row that end with no answer are every row's fate. So one row that
 * crashes its process costs itself, not the others.
 *
 * The process is the worker's profiling server (jobs/instrserve.h): one
 * `divergence-gpu instructions --serve` child, started at the worker's
 * warm-up (instrproc_warm()), that keeps CUPTI set up and answers one
 * request per process the above would have started, under the same
 * deadline and with the same asking again; a child that hangs, dies or
 * answers garbage is killed and the next request starts a fresh one. With
 * instrproc_config.one_shot, DV_INSTRUCTIONS_SERVER=off in the
 * environment, or once a server could not start, it is a process per
 * request as it was.
 *
 * With a cache folder (instrproc_config.cache_dir) the cache outlives the
 * process (jobs/profilecache.h): a new worker of the same binary serves
 * what an earlier one collected, labelled as cached with the time it was
 * collected, and knows the kernels' functions and cubins it learned.
 *
 * The cache key (model/listing/listing.h's struct listing_key): the cubin's CRC, the
 * driver, the device, the kernel's function and mode, the mask hash of the
 * blocks profiled and the geometry. The function and the cubin's CRC are
 * what the first process that profiles a kernel reports; they are facts of
 * this binary, so they are kept per kernel and instantiation and a later
 * row of that kernel is looked up before any process starts. A profile
 * served from the cache says so (`cached`, with the time it was collected).
 * The disassembly is kept too, by cubin CRC, in a folder the processes
 * share: a worker runs nvdisasm once per cubin.
 *
 * One thread uses a struct instrproc. The caller ignores SIGPIPE (the
 * worker and the CLI do).
 */
#ifndef DV_INSTRPROC_H
#define DV_INSTRPROC_H

#include <sys/types.h>

#include "kernels/model/model/experiment.h"

#define INSTRPROC_DEADLINE_MS 15000.0 /* a process of one row; a quarter more per further row */
#define INSTRPROC_BUDGET_MS 20000.0   /* all of a job's new profiles          */
#define INSTRPROC_CACHE_ENTRIES 128
#define INSTRPROC_START_MS 10000.0 /* the profiling server's start, at most: the worker's hello waits 30 s */

struct instrproc_config {
    const char *exe;          /* the divergence-gpu binary; NULL: this process's own */
    const char *disassembler; /* passed on as --disassembler; NULL lets it look      */
    int device;               /* the CUDA ordinal the rows ran on                    */
    double deadline_ms;       /* 0: INSTRPROC_DEADLINE_MS                            */
    double budget_ms;         /* 0: INSTRPROC_BUDGET_MS                              */
    unsigned cache_entries;   /* 0: INSTRPROC_CACHE_ENTRIES                          */
    /* NULL, or the folder where profiles outlive this process
     * (jobs/profilecache.h): a miss in memory is looked up there, and
     * every profile collected is kept there too. A folder that cannot be
     * used is logged once and left: memory alone. */
    const char *cache_dir;
    /* Called before each profiling process starts (NULL: nothing): the
     * caller lets go of a CUPTI profiler of its own there, since a process
     * holding one makes the child's SASS metrics refused. */
    void (*before_child)(void *ctx);
    void *before_child_ctx;
    /* 1: a process per batch, never the profiling server (also when the
     * environment has DV_INSTRUCTIONS_SERVER=off). */
    int one_shot;
};

struct instrproc;

/* A profiler with an empty cache and its disassembly folder (under
 * $TMPDIR); the strings of `c` are copied. NULL with `err`. */
struct instrproc *instrproc_create(const struct instrproc_config *c, char *err);

/* Frees `ip`, its cache and its folder; accepts NULL. */
void instrproc_free(struct instrproc *ip);

/* The profiles of measured report `r`, of request `o` as the job ran it:
 * when o->instructions, each measured Part 1 / Part 2 row's from the cache
 * or from a process of its own, into row->instructions, and the testimony's
 * instructions_* fields (the reason of the first row without one, naming
 * the row; host time; rows from the cache). It never fails the job. */
void instrproc_report(struct instrproc *ip, const struct dv_options *o, struct dv_report *r);

/* The profiles of a batch's `n` measured reports r[i] (of requests o[i],
 * each one Part 1 table on one grid: kernels/gpu/batch.h), as
 * instrproc_report() gives one report's, with one process for the rows of
 * all of them not in the cache: their distinct rows as one table (at most
 * DV_MAX_ROWS, as the batch's), one CUDA context and CUPTI session. Each
 * reader's rows get copies of their own rows' profiles and its testimony
 * names only its own rows. With one report, or rows that do not make one
 * table, each report is done on its own. It never fails a job. */
void instrproc_report_batch(struct instrproc *ip, const struct dv_options *const *o, struct dv_report *const *r,
                            unsigned n);

/* A message's groups (jobs/wire.h "groups": batches of one key popped
 * together): group g is the size[g] reports after the earlier groups' in
 * r[] (requests o[]), each group as instrproc_report_batch() does it, but
 * the rows not in the cache of every group in ONE request to the
 * profiling server: a frame of parts, one part (a union table) per group,
 * run in one CUDA context (cmd/instr_cmd.h). What that request left
 * unanswered (it died at a row) each group asks again on its own, as a
 * batch would: a group whose profile fails gives its readers the reason,
 * the others keep theirs. At most INSTRPROC_MAX_GROUPS groups (more are
 * done one by one). It never fails a job. */
#define INSTRPROC_MAX_GROUPS 8
void instrproc_report_groups(struct instrproc *ip, const struct dv_options *const *o, struct dv_report *const *r,
                             const unsigned *size, unsigned ngroups);

/* The processes started so far, the profiling server's starts among
 * them (the tests count them). */
unsigned instrproc_children(const struct instrproc *ip);

/* The requests the profiling server answered whole; its pid while it
 * runs, else 0. */
unsigned instrproc_served(const struct instrproc *ip);
pid_t instrproc_server_pid(const struct instrproc *ip);

/* The profiling server started now (the worker's warm-up, before its
 * hello), so the first job's profiles do not pay its start. Harmless
 * when it runs, or when the profiler goes a process per batch. */
void instrproc_warm(struct instrproc *ip);

#endif /* DV_INSTRPROC_H */
