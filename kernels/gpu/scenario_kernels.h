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

#include "kernels/model/model/join_record.h"
#include "kernels/model/model/witness_record.h"

/* The suites' sizes at the lesson's 4096 iterations, compiled in: a unit of
 * 512 FMAs (16 chunks of 32) and 4096 short-kernel iterations (128 rounds). */
#define SCENARIO_COMPILED_CHUNKS 16u
#define SCENARIO_COMPILED_ROUNDS 128u

#ifdef __cplusplus
extern "C" {
#endif

/* Path lengths in units, passed to the k-way kernel by value (the pair
 * kernel reads [0] A, [1] B, [2] the tail, [3] the loop body). */
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
 * (pattern[i] >> (j % 32)) & 1: len1 FMAs on side 1, len0 on side 0 (each
 * 1..SCENARIO_SHORT_MAX, every pair instantiated); `iterations` a positive
 * multiple of 32. */
int scenario_launch_short(const float *in, float *out, const uint32_t *pattern, unsigned blocks,
                          unsigned block_x, unsigned block_y, unsigned len0, unsigned len1,
                          unsigned iterations, struct dv_witness_block *witness, char *err);

/* Pair kernel of `variant` (scenario.h, enum scenario_pair_variant): work[i]
 * the side (0: A, 1: B) or the trip count; lengths->len[0..3] the units of A,
 * B, the tail and the loop body. `join` (a device array of one record per
 * thread, zeroed by the caller) runs the join instantiation of a
 * reconvergence variant instead of the timed kernel; `witness` the witness. */
int scenario_launch_pair(const float *in, float *out, const uint8_t *work, unsigned blocks, unsigned block_x,
                         unsigned block_y, unsigned variant, const struct scenario_lengths *lengths, unsigned unit_fmas,
                         struct dv_witness_block *witness, struct dv_join_lane *join, char *err);

/* Which timed kernel a row runs, for the occupancy query. */
enum scenario_kernel_kind {
    SCENARIO_KERNEL_KWAY = 0,
    SCENARIO_KERNEL_LOOP,
    SCENARIO_KERNEL_SHORT,
    SCENARIO_KERNEL_PAIR
};
struct scenario_kernel_ref {
    unsigned kind;       /* enum scenario_kernel_kind                          */
    unsigned len0, len1; /* short: side 0's and side 1's FMAs                  */
    unsigned variant;    /* pair: enum scenario_pair_variant                   */
    int compiled;        /* the compile-time instantiation (k-way, loop, short) */
};

/* Resident blocks of `threads_per_block` per SM of kernel `k`'s timed
 * instantiation into *per_sm. Returns 0 or a DV_* code with `err`. */
int scenario_kernel_occupancy(const struct scenario_kernel_ref *k, unsigned threads_per_block, int *per_sm, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_SCENARIO_KERNELS_H */
