/* instr.h -- the instruction profiles of a process's rows through CUPTI: per SASS
 * instruction the four SASS metrics (warp executions, thread executions,
 * predicated-on thread executions, divergent branch targets), PC-sampling
 * stall reasons, the cubin's CRC and each pc's source line.
 *
 * Only the short-lived process that profiles a job's rows uses this, through
 * its passes (gpu/instr_run.h, for `divergence-gpu instructions`, which the
 * worker starts once per job for the rows not in its cache): CUPTI's
 * SASS patching and PC sampling stay out of the process that times kernels,
 * and what the probe on an H200 found about the API is kept to:
 *   - CUPTI is subscribed to module loads before any CUDA call, so the cubin
 *     of the profiled kernel is captured when it loads (its CRC, the source
 *     correlation and the disassembler need it);
 *   - PC sampling is enabled before the kernel's module is loaded (a module
 *     loaded before the enable gave no samples) and is done, and disabled,
 *     before the SASS metrics patch anything, so the samples are of the
 *     unpatched kernel;
 *   - the four metrics go into one SetConfig with lazy patching on (without
 *     it no record came back), set once per process (SetConfig after
 *     UnsetConfig failed with CUPTI_ERROR_OUT_OF_MEMORY), and each part's
 *     launch is flushed on its own (several collects in one process all
 *     returned records that way);
 *   - a record's cubinCrc holds the low 32 bits of cuptiGetCubinCrc's 64.
 * CUPTI is loaded with dlopen() from the places counters.h names, so the
 * binary runs where it is absent and the profile says why it is missing.
 *
 * One thread uses a struct instr, the thread whose CUDA context is current.
 */
#ifndef DV_INSTR_H
#define DV_INSTR_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/model/listing/listing.h"

#ifdef __cplusplus
extern "C" {
#endif

struct instr;

/* Loads CUPTI and subscribes to module loads. Call before any CUDA call of
 * the process. NULL with `reason` when CUPTI cannot be loaded (or the build
 * has no CUPTI headers, or memory runs out). */
struct instr *instr_create(char *reason);

/* Unsubscribes and frees `p`; accepts NULL. */
void instr_free(struct instr *p);

/* The library loaded (a path), for the record. */
const char *instr_library(const struct instr *p);

/* Readies device ordinal `device` (compute capability `cc_major`) on the
 * current context: CUPTI's profiler, the SASS metrics' ids, and with
 * `stalls` PC sampling enabled. A GPU or driver without SASS metrics is a
 * failure; one without PC sampling is not (*stall_reason, ERR_LEN, says why
 * and stalls stay off). Returns 0, or -1 with `reason`. Before the first
 * launch of the profiled kernel's module. Called again on a new context of
 * the same device (a served process makes one per request, instr_run.h),
 * it readies that context only: the profiler, the support and the ids are
 * the process's, asked once; PC sampling is enabled on the new context. */
int instr_prepare(struct instr *p, int device, int cc_major, int stalls, char *stall_reason, char *reason);

/* How instr_sample() and instr_count() launch: launch(ctx, part, err)
 * enqueues the profiled kernel's launch `part`; both return 0 or a DV_*
 * code with `err`. */
typedef int (*instr_launch_fn)(void *ctx, unsigned part, char *err);

/* PC sampling of launch `part` of `launch` into `f`: the function's stall
 * samples per pc and the reasons' names, f->sampled set (nothing and 0
 * returned when sampling is off). Sampling stays on for the next launch to
 * sample (several rows of one process are each sampled this way, before
 * anything is patched); a failure turns it off. Returns 0, or a DV_* code /
 * -1 with `reason`. */
int instr_sample(struct instr *p, instr_launch_fn launch, void *ctx, unsigned part, struct listing_insns *f,
                 char *reason);

/* Disables PC sampling (before instr_count() patches anything); harmless
 * when it is off. */
void instr_sampling_end(struct instr *p);

/* The SASS metrics of launches 0..nparts-1, each flushed into parts[k]
 * (initialised here: the function's name, its instructions' four counts,
 * the record CRC), all under one enable (launches of several rows of one
 * process included: each launch is flushed on its own). With `ok` NULL a
 * launch that gives no record fails the call; otherwise ok[k] says whether
 * launch k gave records and the others go on. Returns 0, or a DV_* code /
 * -1 with `reason` (CUPTI failed, a launch failed, or without `ok` gave no
 * record). */
int instr_count(struct instr *p, unsigned nparts, instr_launch_fn launch, void *ctx, struct listing_insns *parts,
                int *ok, char *reason);

/* The cubin of the function instr_count() profiled: its 64-bit CRC into
 * *crc, the source file and line of every instruction of `f` (f->function
 * named), and the cubin's bytes in *cubin / *size (valid while `p` lives)
 * for a disassembler. Returns 0, or -1 with `reason` (no captured cubin has
 * the records' CRC). */
int instr_correlate(struct instr *p, struct listing_insns *f, uint64_t *crc, const void **cubin, size_t *size,
                    char *reason);

/* The cubins captured so far (every module loaded since instr_create(),
 * each once). */
unsigned instr_cubin_count(const struct instr *p);

/* Captured cubin `k` (below instr_cubin_count()): its 64-bit CRC
 * (cuptiGetCubinCrc, asked once per cubin, as instr_correlate() asks it)
 * into *crc and its bytes into *cubin / *size (valid while `p` lives), for
 * a disassembler ahead of any record (a served process's warm-up,
 * gpu/instr_run.h). Returns 0, or -1 with `reason`. */
int instr_cubin(struct instr *p, unsigned k, uint64_t *crc, const void **cubin, size_t *size, char *reason);

#ifdef __cplusplus
}
#endif

#endif /* DV_INSTR_H */
