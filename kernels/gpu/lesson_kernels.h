/* lesson_kernels.h -- C-ABI launchers of the divergence kernels (lesson_kernels.cu).
 *
 * Each launcher enqueues one launch on the default stream and checks
 * cudaGetLastError() right after it; a failure becomes a DV_* code
 * (base/status.h) and, in `err`, the launch's kernel and line with CUDA's
 * words (gpu/cuda_call.h).
 */
#ifndef DV_LESSON_KERNELS_H
#define DV_LESSON_KERNELS_H

#include <stdint.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/witness_record.h"

/* The lesson's compile-time iteration count (kIters): the kernels are
 * instantiated for it; any other count runs the runtime-trip-count kernels. */
#define DV_COMPILED_ITERATIONS 4096u

#ifdef __cplusplus
extern "C" {
#endif

struct dv_launch {
    const float *in;      /* device */
    float *out;           /* device */
    unsigned long long n; /* elements: blocks x threads per block */
    unsigned blocks, block_x, block_y;
    unsigned iterations;
    enum dv_mode mode;    /* built-in mode (branch, per-iteration)   */
    const uint32_t *mask; /* device path mask (mask kernel)          */
    struct dv_witness_block *witness; /* device, one per block: NULL runs the
                                         timed kernel, else the witness one */
};

/* 1 when `iterations` has a compile-time instantiation (the lesson's 4096). */
int dv_kernel_compiled(unsigned iterations);

/* What a table's kernel_iterations says for `iterations`: "compile-time
 * 4096" (the lesson's loops as written), "compile-time 4096, unroll N" (a
 * build with -DDV_LESSON_UNROLL=N) or "runtime". A static string. */
const char *dv_kernel_iterations_name(unsigned iterations);

/* Launches the kernel for `kernel` (enum dv_kernel, not SCENARIO): the
 * compile-time instantiation when dv_kernel_compiled(l->iterations), else the
 * runtime one; the witness instantiation when l->witness is set. */
int dv_run_kernel(enum dv_kernel kernel, const struct dv_launch *l, char *err);

/* Resident blocks per SM of the timed kernel for `kernel` and `iterations`
 * at `threads` per block. */
int dv_occupancy(enum dv_kernel kernel, unsigned iterations, unsigned threads, int *blocks_per_sm, char *err);

/* Spins `cycles` SM cycles in one block per SM (`blocks`); the caller times it. */
int dv_run_clock_spin(long long cycles, unsigned blocks, long long *d_out, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_LESSON_KERNELS_H */
