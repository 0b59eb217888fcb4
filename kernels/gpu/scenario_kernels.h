/* scenario_kernels.h -- C-ABI launchers of the scenario kernels
 * (scenario_kernels.cu), so scenario_measure.c stays plain C.
 *
 * Every launch covers `blocks` blocks of block_x x block_y threads, one
 * element per thread (linear id = threadIdx.x + threadIdx.y * block_x), and
 * is followed by a cudaGetLastError() check. Return codes: 0, or the
 * cuda_call.h classification (DV_ERR, DV_ENOGPU, DV_ESTICKY) with
 * `err` naming the launch and CUDA's words. `witness` NULL runs the timed
 * kernel; a device array of one dv_witness_block per block runs the witness.
 */
#ifndef DV_SCENARIO_KERNELS_H
#define DV_SCENARIO_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/model/model/witness_record.h"

/* The suites' sizes at the lesson's 4096 iterations, compiled in: a unit of
 * 512 FMAs (16 chunks of 32) and 4096 short-kernel iterations (128 rounds). */
#define SCENARIO_COMPILED_CHUNKS 16u
#define SCENARIO_COMPILED_ROUNDS 128u

#ifdef __cplusplus
extern "C" {
#endif

/* Path lengths in units, passed to the k-way kernel by value. */
struct scenario_lengths {
    unsigned len[32];
};

/* k-way kernel: thread i runs path path[i] (0..31), an FMA chain of
 * lengths->len[path[i]] * unit_fmas FMAs (unit_fmas a multiple of 32). */
int scenario_launch_kway(const float *in, float *out, const uint8_t *path, unsigned blocks,
                         unsigned block_x, unsigned block_y, const struct scenario_lengths *lengths,
                         unsigned unit_fmas, struct dv_witness_block *witness, char *err);

/* Loop kernel: thread i runs trips[i] iterations of a unit_fmas-FMA body. */
int scenario_launch_loop(const float *in, float *out, const uint32_t *trips, unsigned blocks,
                         unsigned block_x, unsigned block_y, unsigned unit_fmas,
                         struct dv_witness_block *witness, char *err);

/* Short if/else kernel: iteration j of thread i takes side
 * (pattern[i] >> (j % 32)) & 1: len1 FMAs on side 1, len0 on side 0
 * (instantiated: 1|2 and 3|4); `iterations` a multiple of 32. */
int scenario_launch_short(const float *in, float *out, const uint32_t *pattern, unsigned blocks,
                          unsigned block_x, unsigned block_y, unsigned len0, unsigned len1,
                          unsigned iterations, struct dv_witness_block *witness, char *err);

/* 1 when `unit_fmas` and `iterations` run the compile-time instantiations. */
int scenario_kernel_compiled(unsigned unit_fmas, unsigned iterations);

#ifdef __cplusplus
}
#endif

#endif /* DV_SCENARIO_KERNELS_H */
