/* instr_run.h -- the passes of one instruction-profiling process over its
 * planned rows (gpu/instr_plan.h): the device and the buffers, CUPTI, PC
 * sampling, the SASS metrics, and each row's listing.
 *
 * The row's launch is set up with the session's own input, output and mask
 * builders (gpu/session.h), so the profiled launch is the timed one. The
 * process:
 *   1. opens the device, builds the input and output, and each row's mask,
 *      as the measurement does; loads CUPTI and subscribes to module loads
 *      (gpu/instr.h) before any module loads (the process sets
 *      CUDA_MODULE_LOADING=LAZY before its first CUDA call);
 *   2. launches each row's timed kernel once on one wave of its grid under
 *      PC sampling, then, PC sampling off, each part of the blocks that
 *      stand for each row's grid (model/model/profile.h) under the SASS
 *      metrics, every launch flushed on its own;
 *   3. per row combines the parts, maps each pc to its source line (once
 *      per process for a kernel its rows share), puts the disassembly's
 *      text on the instructions (through the caller's instr_disasm_fn: the
 *      disassembler is a program of the host, found and run by the server's
 *      side, server/jobs/disasm.h), and groups the instructions into regions
 *      and runs (model/listing/listing.h).
 * A row whose records name another row's function, or which gets no record,
 * fails on its own; a failure of the device, of CUPTI or a sticky error
 * fails the process (every row left).
 *
 * Where the process's time went is kept by phase (struct instr_phases), for
 * its answer.
 */
#ifndef DV_INSTR_RUN_H
#define DV_INSTR_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/gpu/instr_plan.h"
#include "kernels/model/listing/listing_text.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The phases of a process, in order. */
enum instr_phase {
    INSTR_PH_PLAN,
    INSTR_PH_CUDA,
    INSTR_PH_CUPTI,
    INSTR_PH_SAMPLING,
    INSTR_PH_PATCHED,
    INSTR_PH_LINES,
    INSTR_PH_TEXT,
    INSTR_PH_N
};

/* Their names in the answer ("plan", "cuda", ... "text"). */
extern const char *const instr_phase_names[INSTR_PH_N];

/* Host time by phase: each phase_end() adds the time since the last. */
struct instr_phases {
    double ms[INSTR_PH_N];
    double mark;
};

/* All phases at 0, the clock from now. */
void instr_phases_start(struct instr_phases *ph);

/* The time since the last mark onto phase `k`. */
void instr_phase_end(struct instr_phases *ph, enum instr_phase k);

/* The disassembly of a cubin: listing_text.h's listing_text_fn (its text,
 * malloc()ed, first line "# <the tool's label>", or NULL with why, which
 * becomes the listing's disassembly_reason). Each cubin and function is
 * asked for once per process. */
typedef listing_text_fn instr_disasm_fn;

struct instr_run_opts {
    int stalls;             /* PC sampling's stall reasons                 */
    instr_disasm_fn disasm; /* the text of the instructions                 */
    void *disasm_ctx;
};

/* Every row of `rows` (`n`) not failed yet, each into rr->l (and
 * rr->combined) or failed with its reason; `ph` gets the phases from the
 * device on. Returns 0, or -1 with `err` for a failure of the whole
 * process (the device, CUPTI, a sticky error), which the caller gives every
 * row left. One runner for one run (the one-shot command's way). */
int instr_run(struct instr_job *j, struct instr_row *rows, unsigned n, const struct instr_run_opts *opts,
              struct instr_phases *ph, char *err);

/* ---- a process that serves request after request ----------------------------
 *
 * A struct instr_runner is what the runs of one process share: CUPTI loaded
 * and subscribed (made at the first run, before its kernels' modules load),
 * CUPTI's profiler and the SASS metrics' ids (asked once), the cubins
 * captured and each pc's source line, and each function's disassembly text
 * (listing_text.h), kept for the process's life. What is not shared is the
 * CUDA context: after each run, once its job is cleaned up, the caller
 * calls instr_runner_rest(), which ends PC sampling and resets the device,
 * so the next run's context is new. Why: PC sampling is enabled before a
 * module loads or gives nothing for it, and the SASS metrics leave the
 * kernels they patched patched (instr.h); on a new context each run's
 * modules load again, unpatched, after its sampling is enabled, and the
 * samples and counts are those of a process of its own. Between runs the
 * process holds no context and no device memory. One thread uses it. */
struct instr_runner;

/* An empty runner (no CUDA, no CUPTI yet). NULL with `err`. */
struct instr_runner *instr_runner_create(char *err);

/* Frees `ir` and its CUPTI state; accepts NULL. */
void instr_runner_free(struct instr_runner *ir);

/* instr_run()'s passes on the runner's shared state. */
int instr_runner_run(struct instr_runner *ir, struct instr_job *j, struct instr_row *rows, unsigned n,
                     const struct instr_run_opts *opts, struct instr_phases *ph, char *err);

/* Several requests' rows in one run (a served frame of parts): each row's
 * rr->j is one of jobs[0..njobs) (each planned, none failed as a whole),
 * every job's buffers made in the one context, then CUPTI once, one
 * sampling pass and one SASS-metrics enable over all the rows, as
 * instr_runner_run() does for one. The device is jobs[0]'s; all must
 * name the same. A job whose buffers cannot be made (its grid's memory)
 * fails its own rows with the reason and the others go on; the device, a
 * sticky error, or every job's buffers failing is a failure of the whole.
 * Returns as instr_runner_run(). */
int instr_runner_run_jobs(struct instr_runner *ir, struct instr_job *const *jobs, unsigned njobs,
                          struct instr_row *rows, unsigned n, const struct instr_run_opts *opts,
                          struct instr_phases *ph, char *err);

/* After a run whose job is cleaned up (no buffer of it left): PC sampling
 * off and the device reset (with DV_INSTR_SERVE_CONTEXT=kept in the
 * environment, an experiment, the context is kept). Returns 0, or -1 with
 * `err` (the process should end: a sticky error, or its device is in a
 * state it cannot vouch for). */
int instr_runner_rest(struct instr_runner *ir, char *err);

/* What the warm-up's text part did (instr_runner_warm()). */
struct instr_text_warm {
    unsigned cubins;      /* cubins the lesson's module load handed over    */
    unsigned texts;       /* of them, given their text by the disassembler  */
    double ms;            /* its host time                                  */
    char reason[ERR_LEN]; /* "", or why it gave no text (nothing else lost) */
};

/* The process's part of CUPTI's set-up done ahead of the first run on
 * device `device` (a context made, CUPTI readied, the device reset), so
 * the first request pays what the tenth pays. With `text` (its disasm and
 * disasm_ctx; NULL: none), the text too, in the same context before the
 * reset: the lesson kernels' module loaded (under lazy loading, by the
 * occupancy query of its mask kernel, gpu/lesson_kernels.h dv_occupancy();
 * no launch, no profiling session), and each cubin its
 * load handed over given with its CRC to text->disasm, whose text is
 * dropped: what the disassembler keeps (server/jobs/disasm.h: its memory,
 * its cache folder) makes the first request's text phase a hit. A failure
 * of the text part is said in *tw (NULL: not told) and costs nothing else.
 * Returns 0, or -1 with `err` (the device, CUPTI, a sticky error). */
int instr_runner_warm(struct instr_runner *ir, int device, const struct instr_run_opts *text,
                      struct instr_text_warm *tw, char *err);

/* Part `part` of row `rr`'s plan launched once, with no CUPTI at all (what
 * an outside profiler, Nsight Compute, profiles). Returns 0, or a DV_* code
 * / -1 with `err` (the grid has no such part, the device, the launch). */
int instr_run_launch_only(struct instr_job *j, struct instr_row *rr, unsigned part, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_INSTR_RUN_H */
